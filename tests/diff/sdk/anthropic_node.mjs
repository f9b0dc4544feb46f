// anthropic_node.mjs - @anthropic-ai/sdk (npm) 0.120.0 against fusebox's "anthropic-node" preset.
import Anthropic from '@anthropic-ai/sdk';
import { URL, kase, finish, version, warmUp } from './common.mjs';

console.log(`# @anthropic-ai/sdk ${version('@anthropic-ai/sdk')}`);
const P = '"preset":"anthropic-node"';
const client = (opts = {}) => new Anthropic({ baseURL: URL, apiKey: 'sk-ant-fusebox', ...opts });
const msg = { model: 'claude-mock', max_tokens: 4, messages: [{ role: 'user', content: 'hi' }] };
const create = (spec, opts) => (key) =>
  client(opts).messages.create(msg, { headers: { 'x-fusebox-fault': spec, 'x-fusebox-key': key } });

await warmUp(create('200'));
await kase('anthropic-node: 529 every time, the plain backoff (maxRetries 1)', `${P},"maxRetries":1`, ['529'],
  create('529', { maxRetries: 1 }));
await kase('anthropic-node: 529 with retry-after-ms 50, twice', P,
  ['529,retry-after-ms=50', '529,retry-after-ms=50', '200'], create('529-retry-after-ms-50-times-2'));
await kase('anthropic-node: retry-after 0.05 (seconds)', P, ['429,retry-after=0.05', '200'],
  create('429-retry-after-0.05-times-1'));
await kase('anthropic-node: 408 is retried', P, ['408,retry-after-ms=20', '200'], create('408-retry-after-ms-20-times-1'));
await kase('anthropic-node: 400 is not retried', P, ['400'], create('400'));
await kase('anthropic-node: 401 is not retried', P, ['401'], create('401'));
await kase('anthropic-node: x-should-retry: true retries a 400', P,
  ['400,should-retry=true,retry-after-ms=20', '200'], create('400-should-retry-true-retry-after-ms-20-times-1'));
finish();
