// lib.mjs - what the SDK suites share: the test list, assertions, the mock's attempt log, and
// the fault matrix that every client runs (run.mjs prints the TAP). A client is an adapter:
//   make({headers, maxRetries, timeout}) -> {plain(), stream(), tool(), json?()}
// plain and stream resolve to the answer's text, tool to {name, args}, json to an object;
// each rejects as the client does. `status(err)` reads an HTTP status from the client's error.
import { readFileSync } from 'node:fs';

export const URL = process.env.MOCK_URL;
export const tests = [];
export const test = (name, fn) => tests.push({ name, fn });

let keySeq = 0;
export const newKey = () => `sdk-${process.pid}-${++keySeq}`;

// The filler's first words: what max 4 tokens (or the whole 16) of an answer say.
export const FOUR = 'The mock provider answers';
export const FULL =
  'The mock provider answers with deterministic filler text so that every run sends the same tokens';

export function version(pkg) {
  try {
    const url = new globalThis.URL(`./node_modules/${pkg}/package.json`, import.meta.url);
    return JSON.parse(readFileSync(url)).version;
  } catch {
    return 'unknown';
  }
}

export function assert(cond, what) {
  if (!cond) throw new Error(what);
}

// The attempts the mock logged for this x-fusebox-key.
export async function attempts(key) {
  const log = await (await fetch(`${URL}/__fusebox/log`)).json();
  return log.entries.filter((e) => e.key === key);
}

// Await the promise; it must reject. Returns the error.
export async function rejects(promise, what) {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error(`${what}: no exception`);
}

export const faultHeaders = (spec, key) => ({ 'x-fusebox-fault': spec, 'x-fusebox-key': key });

// The tool every client is asked to call, as JSON Schema; its minimal arguments.
export const WEATHER = {
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } },
  required: ['city', 'days'],
  additionalProperties: false,
};
export const checkWeather = (args) =>
  assert(args?.city === '' && args?.days === 1, `arguments ${JSON.stringify(args)}`);

const ms = (t0) => Date.now() - t0;

/*
 * The fault matrix for one client. `c` = {name, make, status, retries: {status429, status5xx,
 * reset}, overload?, gap429?}: retries says how many attempts the client makes for each
 * retryable fault (2: it retries once and succeeds; 1: it does not retry, so the call fails),
 * overload the status of its provider's overload (503, Anthropic 529), gap429 the least wait
 * before its retry of a 429 (900 ms: it honours the 1 s retry-after; 0: its own backoff),
 * swallowsInBandErrors for a client that ignores a stream's error event.
 */
export function matrix(c) {
  const mk = (spec, key, o = {}) =>
    c.make({ headers: spec ? faultHeaders(spec, key) : { 'x-fusebox-key': key }, ...o });
  const n = c.name;
  test(`${n}: answers`, async () => {
    const text = await mk(null, newKey()).plain();
    assert(text === FOUR, `text '${text}'`);
  });
  test(`${n}: streams`, async () => {
    const text = await mk(null, newKey()).stream();
    assert(text === FOUR, `text '${text}'`);
  });
  test(`${n}: calls the required tool with arguments satisfying its schema`, async () => {
    const call = await mk(null, newKey()).tool();
    assert(call.name === 'weather', `tool ${call.name}`);
    checkWeather(call.args);
  });
  if (c.make({ headers: {} }).json)
    test(`${n}: structured output satisfies the schema`, async () => {
      checkWeather(await mk(null, newKey()).json());
    });
  for (const st of [400, 401])
    test(`${n}: ${st} fails at once, not retried`, async () => {
      const key = newKey();
      const err = await rejects(mk(String(st), key, { maxRetries: 2 }).plain(), `${st}`);
      assert(c.status(err) === st, `status ${c.status(err)}: ${err?.message}`);
      assert((await attempts(key)).length === 1, 'retried');
    });
  retried(c, mk, '429-times-1', 'a 429 with the default retry-after', c.retries.status429, c.gap429 ?? 900);
  retried(c, mk, `${c.overload ?? 503}-times-1`, 'an overload', c.retries.status5xx, 0);
  retried(c, mk, 'reset-times-1', 'a connection reset', c.retries.reset, 0);
  test(`${n}: a hang ends in the client's timeout`, async () => {
    const key = newKey();
    const t0 = Date.now();
    await rejects(mk('hang', key, { maxRetries: 0, timeout: 300 }).plain(), 'hang');
    assert(ms(t0) >= 250, `gave up after ${ms(t0)} ms`);
    assert((await attempts(key)).length === 1, 'attempts');
  });
  test(`${n}: a slow first token arrives late but whole`, async () => {
    const t0 = Date.now();
    const text = await mk('ttft-300ms', newKey()).plain();
    assert(text === FOUR && ms(t0) >= 290, `'${text}' after ${ms(t0)} ms`);
  });
  test(`${n}: a stalled stream resumes`, async () => {
    const t0 = Date.now();
    const text = await mk('stall-1-300ms', newKey()).stream();
    assert(text === FOUR && ms(t0) >= 290, `'${text}' after ${ms(t0)} ms`);
  });
  for (const spec of ['error-2', 'cut-2', 'malformed-2']) {
    if (spec === 'error-2' && c.swallowsInBandErrors) {
      // A client that drops the error event ends the stream early: still not the whole answer.
      test(`${n}: a stream broken by ${spec} ends short (the client ignores the event)`, async () => {
        const text = await mk(spec, newKey(), { maxRetries: 0 }).stream();
        assert(text === 'The mock', `text '${text}'`);
      });
      continue;
    }
    test(`${n}: a stream broken by ${spec} fails`, async () => {
      await rejects(mk(spec, newKey(), { maxRetries: 0 }).stream(), spec);
    });
  }
  test(`${n}: a truncated stream is never the whole answer`, async () => {
    let text;
    try {
      text = await mk('truncate-2', newKey(), { maxRetries: 0 }).stream();
    } catch {
      return; // reported as a failure: fine
    }
    assert(text !== FOUR, 'truncated stream taken as complete');
  });
}

// A fault the client should retry (attempts 2, then the answer) or not (1 attempt, failure).
function retried(c, mk, spec, what, want, gapMs) {
  test(`${c.name}: ${what} ${want === 2 ? 'is retried' : 'is not retried'}`, async () => {
    const key = newKey();
    const run = mk(spec, key, { maxRetries: 2 }).plain();
    if (want === 2) {
      const text = await run;
      assert(text === FOUR, `text '${text}'`);
    } else {
      await rejects(run, spec);
    }
    const a = await attempts(key);
    assert(a.length === want, `${a.length} attempts`);
    if (want === 2 && gapMs > 0)
      assert(a[1].real_ms - a[0].real_ms >= gapMs, `retried after ${a[1].real_ms - a[0].real_ms} ms`);
  });
}

// Runs the tests JOBS at a time (SDK_JOBS, default 8) and prints their results in order. Most
// of a test's time is a real wait (a backoff, a retry-after, a hang until the client's timeout),
// so the waits overlap; a test's attempts are those of its own x-fusebox-key, and every timing
// assertion is a least wait, which running beside others can only lengthen.
export async function run(header, jobs = Number(process.env.SDK_JOBS) || 8) {
  console.log(`# ${header}`);
  console.log(`1..${tests.length}`);
  const done = tests.map(() => null);
  let next = 0;
  let printed = 0;
  let failed = 0;
  const flush = () => {
    for (; printed < tests.length && done[printed]; printed++) {
      const { err } = done[printed];
      const name = tests[printed].name;
      if (!err) {
        console.log(`ok ${printed + 1} - ${name}`);
        continue;
      }
      failed++;
      console.log(`not ok ${printed + 1} - ${name}`);
      console.log(`# ${String(err?.stack ?? err).split('\n').slice(0, 3).join('\n# ')}`);
    }
  };
  const worker = async () => {
    while (next < tests.length) {
      const i = next++;
      try {
        await tests[i].fn();
        done[i] = { err: null };
      } catch (err) {
        done[i] = { err: err ?? new Error('rejected') };
      }
      flush();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, jobs) }, worker));
  return failed;
}
