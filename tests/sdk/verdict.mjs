// verdict.mjs - clients for the verdict (tests/e2e/mock_verdict.sh): `node verdict.mjs MODE`
// against MOCK_URL. MODE "official" runs the official openai and @anthropic-ai/sdk clients
// through faults every rule looks at (they should pass); each other MODE is a deliberately bad
// client, written with fetch, that breaks exactly one rule:
//   retry-400          retries a 400 (after a random 100-200 ms)
//   ignore-retry-after retries a 429 with retry-after: 2 after 100 ms
//   fixed-backoff      6 clients retry a 500 after exactly 1 s each, twice
//   forever            retries a 503 every 40-60 ms and never gives up (14 attempts here)
//   restart-stream     starts a stream cut after 3 tokens again, silently
// Without x-fusebox-key (issue 25: the verdict must tell keyless clients apart or say it
// cannot): "keyless-storm" is 8 official openai clients, default settings, each asking its own
// question, in a 429 storm with Retry-After 1 s; "keyless-storm-same" the same, all asking the
// same question (nothing but timing tells them apart).
// And, for a verdict that expects fallbacks (?expect_fallback=1): "falls-back" moves to another
// model after two 503s (good), "never-falls-back" gives up on its own model (bad).
// Prints one JSON line: {"waits": [{key, retry, ms}...]}, the waits the bad clients measured
// themselves (for fixed-backoff: so that a loaded machine can be told from a missing rule).
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';

const URL = process.env.MOCK_URL;
const MODE = process.argv[2];
const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], max_tokens: 6 };
const msg = { model: 'claude-mock', max_tokens: 6, messages: [{ role: 'user', content: 'hello' }] };
const hdr = (spec, key) => ({ 'x-fusebox-fault': spec, 'x-fusebox-key': `${MODE}-${key}` });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const waits = [];

// ---- the official SDKs -------------------------------------------------------------------------

const openai = new OpenAI({ baseURL: `${URL}/v1`, apiKey: 'sk-fusebox', timeout: 10000 });
const anthropic = new Anthropic({ baseURL: URL, apiKey: 'sk-ant-fusebox', timeout: 10000 });

const settle = (p) => p.then(() => 'ok', (e) => e?.constructor?.name ?? String(e));

async function drain(stream) {
  for await (const _ of stream) {
    /* the events; a cut or an in-band error throws */
  }
}

function official() {
  const runs = [];
  const oa = (spec, key, body = chat) =>
    runs.push(settle(openai.chat.completions.create(body, { headers: hdr(spec, key) })));
  const an = (spec, key, body = msg) =>
    runs.push(settle(anthropic.messages.create(body, { headers: hdr(spec, key) })));
  for (let i = 0; i < 8; i++) oa('500-times-1', `oa-jitter-${i}`); // backoff with jitter
  for (let i = 0; i < 8; i++) an('529-times-1', `an-jitter-${i}`);
  oa('429-retry-after-1-times-1', 'oa-ra'); // Retry-After honoured
  oa('429-retry-after-ms-300-times-1', 'oa-ra-ms');
  an('429-times-1', 'an-ra'); // the dialect's default retry-after: 1
  for (const s of ['400', '401', '403', '404', '422', 'context-length', 'content-filter'])
    oa(s, `oa-${s}`); // not retried
  an('400', 'an-400');
  an('context-length', 'an-context-length');
  oa('500-should-retry-false', 'oa-should-retry-false');
  oa('503', 'oa-503'); // bounded: maxRetries 2
  an('529', 'an-529');
  runs.push(
    settle(
      openai.chat.completions
        .create({ ...chat, stream: true }, { headers: hdr('cut-3', 'oa-cut') })
        .then(drain),
    ),
  );
  runs.push(
    settle(
      anthropic.messages
        .create({ ...msg, stream: true }, { headers: hdr('error-2', 'an-error') })
        .then(drain),
    ),
  );
  return Promise.all(runs);
}

// ---- the bad clients ---------------------------------------------------------------------------

async function post(spec, key, body = chat) {
  const r = await fetch(`${URL}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...hdr(spec, key) },
    body: JSON.stringify(body),
  });
  await r.arrayBuffer();
  return r.status;
}

// Retry while the answer is one of `retry`, waiting wait(n) ms before retry n; at most max.
async function retrying(spec, key, retry, wait, max) {
  for (let n = 1; ; n++) {
    const status = await post(spec, key);
    if (!retry.includes(status) || n === max) return status;
    const t = performance.now();
    await sleep(wait(n));
    waits.push({ key, retry: n, ms: performance.now() - t });
  }
}

async function restartStream() {
  const body = JSON.stringify({ ...chat, stream: true });
  for (let n = 1; n <= 2; n++) {
    const r = await fetch(`${URL}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...hdr('cut-3-times-1', 'stream') },
      body,
    });
    try {
      await r.text();
      return; // the whole stream: done
    } catch {
      // the stream broke after tokens: start again as if nothing happened
    }
  }
}

async function fallingBack(fallback) {
  const wait = () => 100 + Math.random() * 100;
  if ((await retrying('503', 'client', [503], wait, 2)) !== 503 || !fallback) return;
  await post('200', 'client', { ...chat, model: 'gpt-4o-backup' });
}

const bad = {
  'retry-400': () => retrying('400', 'client', [400], () => 100 + Math.random() * 100, 3),
  'ignore-retry-after': () =>
    retrying('429-retry-after-2-times-2', 'client', [429], () => 100, 5),
  'fixed-backoff': () =>
    Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) => retrying('500-times-2', `c${i}`, [500], () => 1000, 5)),
    ),
  forever: () => retrying('503', 'client', [503], () => 40 + Math.random() * 20, 14),
  'restart-stream': restartStream,
  'falls-back': () => fallingBack(true),
  'never-falls-back': () => fallingBack(false),
};

// 8 clients of their own (as 8 processes or users would be), no key, one 429 each.
function keylessStorm(same) {
  const runs = [];
  for (let i = 0; i < 8; i++) {
    const client = new OpenAI({ baseURL: `${URL}/v1`, apiKey: 'sk-fusebox' });
    const content = same ? 'hello' : `hello from client ${i}`;
    const body = { ...chat, messages: [{ role: 'user', content }] };
    const headers = { 'x-fusebox-fault': '429-retry-after-1-times-8' };
    runs.push(settle(client.chat.completions.create(body, { headers })));
  }
  return Promise.all(runs).then((r) => {
    if (r.some((x) => x !== 'ok')) throw new Error(`not every client got its answer: ${r}`);
  });
}

if (MODE === 'official') await official();
else if (MODE === 'keyless-storm') await keylessStorm(false);
else if (MODE === 'keyless-storm-same') await keylessStorm(true);
else if (bad[MODE]) await bad[MODE]();
else throw new Error(`unknown mode ${MODE}`);
console.log(JSON.stringify({ waits }));
