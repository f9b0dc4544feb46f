// langchain_js.mjs - @langchain/core 1.2.5 (AsyncCaller) with @langchain/openai 1.5.6 and
// @langchain/anthropic 1.5.4 against fusebox's "langchain-js" preset (common.mjs). withFallbacks
// ("langchain-js-fallbacks") is not compared here: decide.c drives one provider.
import './webcrypto.mjs'; // first: Node 18 has no global crypto (tests/sdk/webcrypto.mjs)
import { ChatOpenAI } from '@langchain/openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { URL, kase, finish, version, warmUp } from './common.mjs';

console.log(`# @langchain/core ${version('@langchain/core')}, @langchain/openai ${version('@langchain/openai')}, @langchain/anthropic ${version('@langchain/anthropic')}`);
const headers = (spec, key) => ({ 'x-fusebox-fault': spec, 'x-fusebox-key': key });
const gpt = (spec, key, maxRetries = 2) =>
  new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: 'sk-fusebox', maxRetries, maxTokens: 4,
    configuration: { baseURL: `${URL}/v1`, defaultHeaders: headers(spec, key) } });
const claude = (spec, key, maxRetries = 2) =>
  new ChatAnthropic({ model: 'claude-mock', apiKey: 'sk-ant-fusebox', maxRetries, maxTokens: 4,
    anthropicApiUrl: URL, clientOptions: { defaultHeaders: headers(spec, key) } });
const P = '"preset":"langchain-js","maxRetries":2';
const ask = (model) => (key) => model(key).invoke('hi');

await warmUp(ask((k) => gpt('200', k)));
await warmUp(ask((k) => claude('200', k)));
await kase('langchain-js: 503 once, the plain backoff (p-retry: 1-2 s)', P, ['503', '200'],
  ask((k) => gpt('503-times-1', k)));
await kase('langchain-js: a 429 with Retry-After 2.5 s waits max(2.5 s, the backoff)', P,
  ['429,retry-after=2.5', '200'], ask((k) => gpt('429-retry-after-2.5-times-1', k)));
await kase('langchain-js: a 429 asking for 61 s is not retried', P, ['429,retry-after=61'],
  ask((k) => gpt('429-retry-after-61', k)));
await kase('langchain-js: a 429 without Retry-After (Anthropic) is not retried', P, ['429'],
  ask((k) => claude('429-no-retry-after', k)));
for (const s of [400, 401, 404, 409])
  await kase(`langchain-js: ${s} is not retried (STATUS_NO_RETRY)`, P, [`${s}`], ask((k) => gpt(`${s}`, k)));
await kase('langchain-js: 422 is retried (not in STATUS_NO_RETRY)', `${P.replace('2', '1')}`, ['422', '422'],
  ask((k) => claude('422', k, 1)));
await kase('langchain-js: maxRetries 0', '"preset":"langchain-js","maxRetries":0', ['529'],
  ask((k) => claude('529', k, 0)));
finish();
