// openai_node.mjs - openai (npm) 7.5.0 against fusebox's "openai-node" preset (common.mjs).
import OpenAI from 'openai';
import { URL, kase, finish, version, warmUp } from './common.mjs';

console.log(`# openai ${version('openai')}`);
const P = '"preset":"openai-node"';
const client = (opts = {}) => new OpenAI({ baseURL: `${URL}/v1`, apiKey: 'sk-fusebox', ...opts });
const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 };
const create = (spec, opts) => (key) =>
  client(opts).chat.completions.create(chat, { headers: { 'x-fusebox-fault': spec, 'x-fusebox-key': key } });

await warmUp(create('200'));
await kase('openai-node: 503 every time, the plain backoff', P, ['503'], create('503'));
await kase('openai-node: 429 with retry-after-ms 50, twice', P,
  ['429,retry-after-ms=50', '429,retry-after-ms=50', '200'], create('429-retry-after-ms-50-times-2'));
await kase('openai-node: retry-after-ms 0 is at once', P, ['429,retry-after-ms=0', '200'],
  create('429-retry-after-ms-0-times-1'));
await kase('openai-node: retry-after-ms 61000 is above 60 s: the backoff', P,
  ['503,retry-after-ms=61000', '200'], create('503-retry-after-ms-61000-times-1'));
await kase('openai-node: 409 is retried', P, ['409,retry-after-ms=20', '200'], create('409-retry-after-ms-20-times-1'));
await kase('openai-node: a reset is retried', P, ['0', '200'], create('reset-times-1'));
await kase('openai-node: 400 is not retried', P, ['400'], create('400'));
await kase('openai-node: x-should-retry: false is obeyed', P, ['503,should-retry=false'], create('503-should-retry-false'));
await kase('openai-node: maxRetries 1', `${P},"maxRetries":1`, ['500,retry-after-ms=10'],
  create('500-retry-after-ms-10', { maxRetries: 1 }));
finish();
