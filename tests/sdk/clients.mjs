// clients.mjs - every client library the mock claims to serve, as an adapter for the fault
// matrix (lib.mjs): the official openai (chat, Responses API, AzureOpenAI), @anthropic-ai/sdk
// and @google/genai SDKs, LangChain JS (ChatOpenAI on chat completions and on the Responses API,
// ChatAnthropic) and the Vercel AI SDK (@ai-sdk/openai's default model, which calls the
// Responses API, and @ai-sdk/anthropic).
import OpenAI, { AzureOpenAI } from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import { ChatOpenAI } from '@langchain/openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { tool as lcTool } from '@langchain/core/tools';
import { generateText, streamText, generateObject, tool as aiTool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { z } from 'zod';

import { URL, WEATHER, matrix, test, newKey, attempts, assert, rejects, faultHeaders } from './lib.mjs';

const weatherZod = z.object({ city: z.string(), days: z.number().int().min(1) });
const user = [{ role: 'user', content: 'hello' }];
const statusOf = (err) => err?.status ?? err?.lastError?.statusCode ?? err?.statusCode;

// ---- the official SDKs ----------------------------------------------------------------------

function chatClient(c, model) {
  const req = { model, messages: user, max_tokens: 4 };
  return {
    plain: async () => (await c.chat.completions.create(req)).choices[0].message.content,
    stream: async () => {
      let text = '';
      for await (const ch of await c.chat.completions.create({ ...req, stream: true }))
        text += ch.choices[0]?.delta?.content ?? '';
      return text;
    },
    tool: async () => {
      const r = await c.chat.completions.create({
        ...req,
        tools: [{ type: 'function', function: { name: 'weather', parameters: WEATHER } }],
        tool_choice: 'required',
      });
      const call = r.choices[0].message.tool_calls[0];
      return { name: call.function.name, args: JSON.parse(call.function.arguments) };
    },
    json: async () => {
      const r = await c.chat.completions.create({
        ...req,
        max_tokens: 100,
        response_format: { type: 'json_schema', json_schema: { name: 'w', schema: WEATHER, strict: true } },
      });
      return JSON.parse(r.choices[0].message.content);
    },
  };
}

const openaiOptions = ({ headers, maxRetries = 2, timeout = 3000 }) => ({
  apiKey: 'sk-fusebox',
  defaultHeaders: headers,
  maxRetries,
  timeout,
});

matrix({
  name: 'openai chat',
  make: (o) => chatClient(new OpenAI({ baseURL: `${URL}/v1`, ...openaiOptions(o) }), 'gpt-4o-mini'),
  status: statusOf,
  retries: { status429: 2, status5xx: 2, reset: 2 },
});

matrix({
  name: 'openai AzureOpenAI',
  make: (o) =>
    chatClient(new AzureOpenAI({ endpoint: URL, apiVersion: '2024-10-21', ...openaiOptions(o) }), 'gpt4o'),
  status: statusOf,
  retries: { status429: 2, status5xx: 2, reset: 2 },
});

function responsesClient(c) {
  const req = { model: 'gpt-4o', input: 'hello', max_output_tokens: 4 };
  return {
    plain: async () => (await c.responses.create(req)).output_text,
    stream: async () => {
      const s = c.responses.stream(req);
      let text = '';
      for await (const e of s) if (e.type === 'response.output_text.delta') text += e.delta;
      const final = await s.finalResponse();
      if (final.status === 'failed') throw new Error(`response failed: ${final.error?.message}`);
      return text;
    },
    tool: async () => {
      const r = await c.responses.create({
        ...req,
        tools: [{ type: 'function', name: 'weather', parameters: WEATHER, strict: true }],
        tool_choice: 'required',
      });
      const call = r.output.find((o) => o.type === 'function_call');
      return { name: call.name, args: JSON.parse(call.arguments) };
    },
    json: async () => {
      const r = await c.responses.create({
        ...req,
        max_output_tokens: 100,
        text: { format: { type: 'json_schema', name: 'w', schema: WEATHER, strict: true } },
      });
      return JSON.parse(r.output_text);
    },
  };
}

matrix({
  name: 'openai responses',
  make: (o) => responsesClient(new OpenAI({ baseURL: `${URL}/v1`, ...openaiOptions(o) })),
  status: statusOf,
  retries: { status429: 2, status5xx: 2, reset: 2 },
});

function anthropicClient({ headers, maxRetries = 2, timeout = 3000 }) {
  const c = new Anthropic({ baseURL: URL, apiKey: 'sk-ant-fusebox', defaultHeaders: headers, maxRetries, timeout });
  const req = { model: 'claude-mock', max_tokens: 4, messages: user };
  return {
    plain: async () => (await c.messages.create(req)).content[0].text,
    stream: async () => {
      const s = c.messages.stream(req);
      let text = '';
      for await (const e of s) if (e.type === 'content_block_delta') text += e.delta.text ?? '';
      await s.finalMessage();
      return text;
    },
    tool: async () => {
      const r = await c.messages.create({
        ...req,
        tools: [{ name: 'weather', input_schema: WEATHER }],
        tool_choice: { type: 'any' },
      });
      const block = r.content.find((b) => b.type === 'tool_use');
      return { name: block.name, args: block.input };
    },
    json: async () => {
      const r = await c.messages.create({
        ...req,
        max_tokens: 100,
        output_config: { format: { type: 'json_schema', schema: WEATHER } },
      });
      return JSON.parse(r.content[0].text);
    },
  };
}

matrix({
  name: 'anthropic messages',
  make: anthropicClient,
  status: statusOf,
  overload: 529,
  retries: { status429: 2, status5xx: 2, reset: 2 },
});

function geminiClient({ headers, maxRetries = 2, timeout = 3000 }) {
  // @google/genai retries only when asked (httpOptions.retryOptions), with its own backoff.
  const retryOptions = maxRetries > 0 ? { attempts: maxRetries + 1, initialDelay: 0.05, maxDelay: 0.2 } : undefined;
  const g = new GoogleGenAI({ apiKey: 'fusebox', httpOptions: { baseUrl: URL, headers, timeout, retryOptions } });
  const req = { model: 'gemini-2.5-flash', contents: 'hello', config: { maxOutputTokens: 4 } };
  return {
    plain: async () => (await g.models.generateContent(req)).text,
    stream: async () => {
      let text = '';
      for await (const ch of await g.models.generateContentStream(req)) text += ch.text ?? '';
      return text;
    },
    tool: async () => {
      const r = await g.models.generateContent({
        ...req,
        config: {
          tools: [{ functionDeclarations: [{ name: 'weather', parametersJsonSchema: WEATHER }] }],
          toolConfig: { functionCallingConfig: { mode: 'ANY' } },
        },
      });
      return { name: r.functionCalls[0].name, args: r.functionCalls[0].args };
    },
    json: async () => {
      const r = await g.models.generateContent({
        ...req,
        config: { responseMimeType: 'application/json', responseJsonSchema: WEATHER },
      });
      return JSON.parse(r.text);
    },
  };
}

matrix({
  name: 'google genai',
  make: geminiClient,
  status: statusOf,
  gap429: 0, // its backoff ignores RetryInfo
  // p-retry 4 (its retry loop) stops on a TypeError unless it is a known network message, and
  // Node's fetch reports a reset as TypeError "fetch failed": a reset is not retried.
  retries: { status429: 2, status5xx: 2, reset: 1 },
});

// ---- LangChain JS ---------------------------------------------------------------------------

const lcWeather = lcTool(async () => 'sunny', { name: 'weather', description: 'the weather', schema: weatherZod });

// toolChoice: LangChain's name for "call a tool". @langchain/openai 1.5.8 drops the string
// choices ("any", "required") on its Responses API path (src/chat_models/responses.ts keeps only
// object choices), so that path names the tool instead.
function langchainClient(model, structured, toolChoice = 'any') {
  return {
    plain: async () => (await model.invoke('hello')).text,
    stream: async () => {
      let text = '';
      for await (const ch of await model.stream('hello')) text += ch.text;
      return text;
    },
    tool: async () => {
      const bound = model.bindTools([lcWeather], { tool_choice: toolChoice });
      const call = (await bound.invoke('hello')).tool_calls[0];
      return { name: call.name, args: call.args };
    },
    json: async () => structured.withStructuredOutput(weatherZod).invoke('hello'),
  };
}

const lcOpenAI = ({ headers, maxRetries = 2, timeout = 3000 }, extra, toolChoice) => {
  const opts = { model: 'gpt-4o-mini', apiKey: 'sk-fusebox', configuration: { baseURL: `${URL}/v1`, defaultHeaders: headers }, maxRetries, timeout, ...extra };
  return langchainClient(new ChatOpenAI({ ...opts, maxTokens: 4 }), new ChatOpenAI(opts), toolChoice);
};

matrix({
  name: 'langchain ChatOpenAI',
  make: (o) => lcOpenAI(o, {}),
  status: statusOf,
  retries: { status429: 2, status5xx: 2, reset: 2 },
});

matrix({
  name: 'langchain ChatOpenAI useResponsesApi',
  make: (o) => lcOpenAI(o, { useResponsesApi: true }, 'weather'),
  status: statusOf,
  // @langchain/openai 1.5.8 (src/converters/responses.ts) handles neither the error event nor
  // response.failed: the stream just ends.
  swallowsInBandErrors: true,
  retries: { status429: 2, status5xx: 2, reset: 2 },
});

matrix({
  name: 'langchain ChatAnthropic',
  make: ({ headers, maxRetries = 2, timeout = 3000 }) => {
    const opts = { model: 'claude-mock', apiKey: 'sk-ant-fusebox', anthropicApiUrl: URL, maxRetries, clientOptions: { defaultHeaders: headers, timeout } };
    return langchainClient(new ChatAnthropic({ ...opts, maxTokens: 4 }), new ChatAnthropic({ ...opts, maxTokens: 100 }));
  },
  status: statusOf,
  overload: 529,
  retries: { status429: 2, status5xx: 2, reset: 2 },
});

// ---- the Vercel AI SDK ----------------------------------------------------------------------

function aiClient(model, { maxRetries = 2, timeout = 3000 }) {
  const base = () => ({ model, prompt: 'hello', maxOutputTokens: 4, maxRetries, abortSignal: AbortSignal.timeout(timeout) });
  return {
    plain: async () => (await generateText(base())).text,
    stream: async () => {
      let text = '';
      for await (const p of streamText(base()).fullStream) {
        if (p.type === 'text-delta') text += p.text;
        if (p.type === 'error') throw p.error;
      }
      return text;
    },
    tool: async () => {
      const r = await generateText({ ...base(), tools: { weather: aiTool({ inputSchema: weatherZod }) }, toolChoice: 'required' });
      return { name: r.toolCalls[0].toolName, args: r.toolCalls[0].input };
    },
    json: async () => (await generateObject({ ...base(), maxOutputTokens: 100, schema: weatherZod })).object,
  };
}

matrix({
  name: 'ai-sdk openai (Responses API)',
  make: (o) => aiClient(createOpenAI({ baseURL: `${URL}/v1`, apiKey: 'sk-fusebox', headers: o.headers })('gpt-4o-mini'), o),
  status: statusOf,
  retries: { status429: 2, status5xx: 2, reset: 2 },
});

matrix({
  name: 'ai-sdk anthropic',
  make: (o) => aiClient(createAnthropic({ baseURL: `${URL}/v1`, apiKey: 'sk-ant-fusebox', headers: o.headers })('claude-mock'), o),
  status: statusOf,
  overload: 529,
  retries: { status429: 2, status5xx: 2, reset: 2 },
});

// ---- what the matrix does not show --------------------------------------------------------------

test('langchain ChatAnthropic: a 429 without retry-after is not retried (@langchain/core headerless_429)', async () => {
  const key = newKey();
  const m = new ChatAnthropic({
    model: 'claude-mock', apiKey: 'sk-ant-fusebox', anthropicApiUrl: URL, maxRetries: 2, maxTokens: 4,
    clientOptions: { defaultHeaders: faultHeaders('429-no-retry-after-times-1', key) },
  });
  await rejects(m.invoke('hello'), 'headerless 429');
  assert((await attempts(key)).length === 1, 'retried');
});

test("ai-sdk openai: the provider's default model calls the Responses API", async () => {
  const key = newKey();
  const model = createOpenAI({ baseURL: `${URL}/v1`, apiKey: 'sk-fusebox', headers: { 'x-fusebox-key': key } })('gpt-4o-mini');
  await generateText({ model, prompt: 'hello', maxOutputTokens: 4, maxRetries: 0 });
  const paths = (await attempts(key)).map((e) => e.path);
  assert(paths.join(',') === '/v1/responses', `paths ${paths}`);
});

test('openai AzureOpenAI: calls the deployment path with api-version and api-key', async () => {
  const key = newKey();
  const c = new AzureOpenAI({ endpoint: URL, apiVersion: '2024-10-21', apiKey: 'k', defaultHeaders: { 'x-fusebox-key': key } });
  await c.chat.completions.create({ model: 'gpt4o', messages: user, max_tokens: 4 });
  await c.embeddings.create({ model: 'emb', input: 'hi' });
  const paths = (await attempts(key)).map((e) => e.path);
  assert(paths.join(',') === '/openai/deployments/gpt4o/chat/completions,/openai/deployments/emb/embeddings',
    `paths ${paths}`);
});
