// ai_sdk.mjs - ai 7.0.77 with @ai-sdk/openai 4.0.46 and @ai-sdk/anthropic 4.0.41 against
// fusebox's "vercel-ai" preset (common.mjs). The OpenAI model is the chat one,
// openai.chat(...): the provider's default model calls the Responses API (POST /v1/responses),
// which fusebox mock does not serve yet.
import { generateText } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { URL, kase, finish, version, warmUp } from './common.mjs';

console.log(`# ai ${version('ai')}, @ai-sdk/openai ${version('@ai-sdk/openai')}, @ai-sdk/anthropic ${version('@ai-sdk/anthropic')}`);
const openai = createOpenAI({ baseURL: `${URL}/v1`, apiKey: 'sk-fusebox' });
const anthropic = createAnthropic({ baseURL: `${URL}/v1`, apiKey: 'sk-ant-fusebox' });
const P = '"preset":"vercel-ai"';
const gen = (model, spec, maxRetries) => (key) =>
  generateText({ model, prompt: 'hi', maxOutputTokens: 4, maxRetries,
    headers: { 'x-fusebox-fault': spec, 'x-fusebox-key': key } });

await warmUp(gen(openai.chat('gpt-4o-mini'), '200'));
await warmUp(gen(anthropic('claude-mock'), '200'));
await kase('vercel-ai: retry-after-ms 70000 is >= 60 s and > the 2 s backoff: the plain backoff', `${P},"maxRetries":1`,
  ['429,retry-after-ms=70000', '200'], gen(openai.chat('gpt-4o-mini'), '429-retry-after-ms-70000-times-1', 1));
await kase('vercel-ai: 429 with retry-after-ms 50, twice', P,
  ['429,retry-after-ms=50', '429,retry-after-ms=50', '200'], gen(openai.chat('gpt-4o-mini'), '429-retry-after-ms-50-times-2'));
await kase('vercel-ai: x-should-retry: false is not read', P, ['503,should-retry=false,retry-after-ms=30', '200'],
  gen(openai.chat('gpt-4o-mini'), '503-should-retry-false-retry-after-ms-30-times-1'));
await kase('vercel-ai: 400 is not retried', P, ['400'], gen(openai.chat('gpt-4o-mini'), '400'));
await kase('vercel-ai: 409 is retried', P, ['409,retry-after=0.03', '200'],
  gen(openai.chat('gpt-4o-mini'), '409-retry-after-0.03-times-1'));
await kase('vercel-ai: anthropic 529 with retry-after-ms 40, every time', P,
  ['529,retry-after-ms=40'], gen(anthropic('claude-mock'), '529-retry-after-ms-40'));
await kase('vercel-ai: maxRetries 0', `${P},"maxRetries":0`, ['503'], gen(openai.chat('gpt-4o-mini'), '503', 0));
finish();
