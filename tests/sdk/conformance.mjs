// conformance.mjs - the official OpenAI and Anthropic Node SDKs against `fusebox mock`: the
// behaviours each pins down beyond the fault matrix (clients.mjs): exception classes, retry
// counts and waits, x-should-retry, in-band errors, and the endpoints beside chat and messages
// (embeddings, models, legacy completions, count_tokens). Registered into lib.mjs; run.mjs runs.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';

import { URL, test, newKey, attempts, assert, FOUR } from './lib.mjs';

const openai = (opts = {}) =>
  new OpenAI({ baseURL: `${URL}/v1`, apiKey: 'sk-fusebox', timeout: 3000, maxRetries: 2, ...opts });
const anthropic = (opts = {}) =>
  new Anthropic({ baseURL: URL, apiKey: 'sk-ant-fusebox', timeout: 3000, maxRetries: 2, ...opts });
const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], max_tokens: 4 };
const msg = { model: 'claude-mock', max_tokens: 4, messages: [{ role: 'user', content: 'hello' }] };
const fault = (spec, key) => ({ headers: { 'x-fusebox-fault': spec, 'x-fusebox-key': key } });

async function rejects(promise, cls, what) {
  try {
    await promise;
  } catch (err) {
    assert(err instanceof cls, `${what}: got ${err?.constructor?.name}: ${err?.message}`);
    return err;
  }
  throw new Error(`${what}: no exception`);
}

// ---- OpenAI -------------------------------------------------------------------------------------

for (const [status, cls] of [
  [400, OpenAI.BadRequestError],
  [401, OpenAI.AuthenticationError],
  [429, OpenAI.RateLimitError],
  [500, OpenAI.InternalServerError],
]) {
  test(`openai: ${status} raises ${cls.name}`, async () => {
    const key = newKey();
    await rejects(
      openai({ maxRetries: 0 }).chat.completions.create(chat, fault(String(status), key)),
      cls,
      `${status}`,
    );
  });
}

test('openai: 429 retry-after-ms 250 is retried after 250 ms, then succeeds', async () => {
  const key = newKey();
  const r = await openai().chat.completions.create(chat, fault('429-retry-after-ms-250-times-1', key));
  assert(r.choices[0].message.content.length > 0, 'no content');
  const a = await attempts(key);
  assert(a.map((e) => e.retry_count).join(',') === '0,1', `retry counts ${a.map((e) => e.retry_count)}`);
  assert(a[0].status === 429 && a[1].status === 200, 'statuses');
  assert(a[1].real_ms - a[0].real_ms >= 240, `gap ${a[1].real_ms - a[0].real_ms} ms`);
});

test('openai: 400 is not retried', async () => {
  const key = newKey();
  await rejects(openai().chat.completions.create(chat, fault('400', key)), OpenAI.BadRequestError, '400');
  assert((await attempts(key)).length === 1, 'retried a 400');
});

test('openai: 500 with x-should-retry: false is not retried', async () => {
  const key = newKey();
  await rejects(
    openai().chat.completions.create(chat, fault('500-should-retry-false', key)),
    OpenAI.InternalServerError,
    '500',
  );
  assert((await attempts(key)).length === 1, 'retried despite x-should-retry: false');
});

test('openai: 400 with x-should-retry: true is retried', async () => {
  const key = newKey();
  const r = await openai().chat.completions.create(
    chat,
    fault('400-should-retry-true-retry-after-ms-10-times-1', key),
  );
  assert(r.object === 'chat.completion', 'no completion');
  assert((await attempts(key)).length === 2, 'not retried');
});

test('openai: streaming yields content, finish_reason and usage', async () => {
  const stream = await openai().chat.completions.create({
    ...chat,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta?.content) text += chunk.choices[0].delta.content;
    if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  assert(text === 'The mock provider answers', `text '${text}'`);
  assert(finish === 'length', `finish ${finish}`);
  assert(usage?.completion_tokens === 4, `usage ${JSON.stringify(usage)}`);
});

test('openai: in-band stream error raises APIError from iteration', async () => {
  const stream = await openai().chat.completions.create({ ...chat, stream: true }, fault('error-2', newKey()));
  const err = await rejects(
    (async () => {
      for await (const _ of stream);
    })(),
    OpenAI.APIError,
    'in-band error',
  );
  assert(err.status === undefined, `status ${err.status}`);
});

test('openai: stream cut mid-way raises a transport error', async () => {
  const stream = await openai().chat.completions.create({ ...chat, stream: true }, fault('cut-2', newKey()));
  let failed = false;
  try {
    for await (const _ of stream);
  } catch {
    failed = true;
  }
  assert(failed, 'cut stream iterated cleanly');
});

test('openai: hang ends in APIConnectionTimeoutError after retries', async () => {
  const key = newKey();
  await rejects(
    openai({ timeout: 300, maxRetries: 1 }).chat.completions.create(chat, fault('hang', key)),
    OpenAI.APIConnectionTimeoutError,
    'hang',
  );
  assert((await attempts(key)).length === 2, 'timeouts not retried once');
});

// ---- Anthropic ----------------------------------------------------------------------------------

for (const [status, cls] of [
  [400, Anthropic.BadRequestError],
  [401, Anthropic.AuthenticationError],
  [429, Anthropic.RateLimitError],
  [500, Anthropic.InternalServerError],
  [529, Anthropic.OverloadedError ?? Anthropic.InternalServerError],
]) {
  test(`anthropic: ${status} raises ${cls.name}`, async () => {
    const err = await rejects(
      anthropic({ maxRetries: 0 }).messages.create(msg, fault(String(status), newKey())),
      cls,
      `${status}`,
    );
    assert(err.status === status, `status ${err.status}`);
  });
}

test('anthropic: 529 overloaded is retried', async () => {
  const key = newKey();
  const r = await anthropic().messages.create(msg, fault('529-retry-after-ms-10-times-1', key));
  assert(r.type === 'message', 'no message');
  assert((await attempts(key)).map((e) => e.status).join(',') === '529,200', 'not retried');
});

test('anthropic: 429 retry-after-ms 250 is retried after 250 ms, then succeeds', async () => {
  const key = newKey();
  const r = await anthropic().messages.create(msg, fault('429-retry-after-ms-250-times-1', key));
  assert(r.content[0].text.length > 0, 'no text');
  const a = await attempts(key);
  assert(a.map((e) => e.retry_count).join(',') === '0,1', `retry counts ${a.map((e) => e.retry_count)}`);
  assert(a[1].real_ms - a[0].real_ms >= 240, `gap ${a[1].real_ms - a[0].real_ms} ms`);
});

test('anthropic: 400 and x-should-retry: false are not retried', async () => {
  const k1 = newKey();
  const k2 = newKey();
  await rejects(anthropic().messages.create(msg, fault('400', k1)), Anthropic.BadRequestError, '400');
  await rejects(
    anthropic().messages.create(msg, fault('503-should-retry-false', k2)),
    Anthropic.InternalServerError,
    '503',
  );
  assert((await attempts(k1)).length === 1 && (await attempts(k2)).length === 1, 'retried');
});

test('anthropic: streaming yields the events and the final message', async () => {
  const stream = anthropic().messages.stream(msg);
  const types = [];
  stream.on('streamEvent', (e) => types.push(e.type));
  const final = await stream.finalMessage();
  assert(final.content[0].text === 'The mock provider answers', `text '${final.content[0].text}'`);
  assert(final.stop_reason === 'max_tokens', `stop ${final.stop_reason}`);
  assert(final.usage.output_tokens === 4, `usage ${JSON.stringify(final.usage)}`);
  assert(types[0] === 'message_start' && types.at(-1) === 'message_stop', `events ${types}`);
});

test('anthropic: in-band overloaded_error raises APIError from iteration', async () => {
  const stream = await anthropic().messages.create({ ...msg, stream: true }, fault('error-1', newKey()));
  const err = await rejects(
    (async () => {
      for await (const _ of stream);
    })(),
    Anthropic.APIError,
    'in-band error',
  );
  assert(JSON.stringify(err.error ?? err.message).includes('overloaded_error'), `error ${err.message}`);
});

// ---- the other endpoints -----------------------------------------------------------------------

test('openai: embeddings (base64 by default) decode to unit vectors', async () => {
  const r = await openai().embeddings.create({ model: 'text-embedding-3-small', input: ['hello', 'world'] });
  assert(r.data.length === 2 && r.data[0].embedding.length === 1536, `shape ${r.data.length}`);
  const norm = r.data[0].embedding.reduce((s, x) => s + x * x, 0);
  assert(Math.abs(norm - 1) < 1e-5, `norm ${norm}`);
});

test('openai: embeddings honour dimensions and a 429 is retried', async () => {
  const key = newKey();
  const r = await openai().embeddings.create({ model: 'e', input: 'hi', dimensions: 8 }, fault('429-times-1', key));
  assert(r.data[0].embedding.length === 8, `length ${r.data[0].embedding.length}`);
  assert((await attempts(key)).map((e) => e.status).join(',') === '429,200', 'not retried');
});

test('openai: models.retrieve and models.list', async () => {
  const m = await openai().models.retrieve('gpt-4o');
  assert(m.id === 'gpt-4o' && m.object === 'model', JSON.stringify(m));
  const list = [];
  for await (const x of openai().models.list()) list.push(x.id);
  assert(list.length >= 1, 'empty list');
  await rejects(openai().models.retrieve('fb-404'), OpenAI.NotFoundError, 'fb-404');
});

test('openai: legacy completions, plain and streamed', async () => {
  const r = await openai().completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say', max_tokens: 4 });
  assert(r.choices[0].text === FOUR, `text '${r.choices[0].text}'`);
  let text = '';
  for await (const c of await openai().completions.create({ model: 'i', prompt: 'Say', max_tokens: 4, stream: true }))
    text += c.choices[0]?.text ?? '';
  assert(text === FOUR, `streamed '${text}'`);
});

test('anthropic: countTokens and models.retrieve', async () => {
  const n = await anthropic().messages.countTokens({ model: 'c', messages: [{ role: 'user', content: '12345678' }] });
  assert(n.input_tokens === 2, JSON.stringify(n));
  const m = await anthropic().models.retrieve('claude-x');
  assert(m.id === 'claude-x' && m.type === 'model', JSON.stringify(m));
});

test('anthropic: an overloaded_error right after message_start raises from iteration', async () => {
  const stream = await anthropic().messages.create({ ...msg, stream: true }, fault('error-0', newKey()));
  const types = [];
  const err = await rejects(
    (async () => {
      for await (const e of stream) types.push(e.type);
    })(),
    Anthropic.APIError,
    'in-band error',
  );
  assert(types.join(',') === 'message_start', `events before the error: ${types}`);
  assert(JSON.stringify(err.error ?? err.message).includes('overloaded_error'), `error ${err.message}`);
});

test('anthropic: a bare 429 carries retry-after, so the SDK waits about 1 s', async () => {
  const key = newKey();
  await anthropic().messages.create(msg, fault('429-times-1', key));
  const a = await attempts(key);
  assert(a.length === 2 && a[1].real_ms - a[0].real_ms >= 900, `gap ${a[1]?.real_ms - a[0]?.real_ms} ms`);
});

