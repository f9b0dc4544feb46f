// gemini_embed.mjs - @google/genai's models.embedContent, generateContent and
// generateContentStream against the mock, on the Gemini API versions v1 and v1beta
// (tests/e2e/mock_gemini.sh runs it with the pinned current release and the previous major):
// `MOCK_URL=... node gemini_embed.mjs`. Prints one JSON line: per version, what the SDK
// returned, the paths the mock logged, and the error a 503 fault raised.
import { GoogleGenAI } from '@google/genai';

const URL = process.env.MOCK_URL;
const out = {};
const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
for (const apiVersion of ['v1', 'v1beta']) {
  await fetch(`${URL}/__fusebox/reset`, { method: 'POST' });
  const g = new GoogleGenAI({ apiKey: 'fusebox', httpOptions: { baseUrl: URL, apiVersion } });
  const model = 'text-embedding-004';
  const two = await g.models.embedContent({ model, contents: ['hello', 'bye'], config: { outputDimensionality: 8 } });
  const one = await g.models.embedContent({ model, contents: 'hello' });
  const again = await g.models.embedContent({ model, contents: 'hello', config: { outputDimensionality: 8 } });
  let error = null;
  try {
    await new GoogleGenAI({
      apiKey: 'fusebox',
      httpOptions: { baseUrl: URL, apiVersion, headers: { 'x-fusebox-fault': '503' } },
    }).models.embedContent({ model, contents: 'hello' });
  } catch (e) {
    error = { name: e?.constructor?.name, status: e?.status };
  }
  const log = await (await fetch(`${URL}/__fusebox/log`)).json();
  out[apiVersion] = {
    dims: two.embeddings.map((e) => e.values.length),
    norms: two.embeddings.map((e) => norm(e.values)),
    distinct: two.embeddings[0].values.join() !== two.embeddings[1].values.join(),
    default_dims: one.embeddings[0].values.length,
    same_text_same_vector: again.embeddings[0].values.join() === two.embeddings[0].values.join(),
    paths: log.entries.map((e) => [e.path, e.status]),
    error,
  };
  // generateContent, then the same streamed (streamGenerateContent?alt=sse); an error is
  // recorded (the embeddings' results still print)
  await fetch(`${URL}/__fusebox/reset`, { method: 'POST' });
  const req = { model: 'gemini-2.5-flash', contents: 'hello', config: { maxOutputTokens: 6 } };
  const gen = { text: null, chunks: [], error: null };
  try {
    gen.text = (await g.models.generateContent(req)).text;
    for await (const ch of await g.models.generateContentStream(req)) gen.chunks.push(ch.text ?? '');
  } catch (e) {
    gen.error = String(e?.message ?? e).slice(0, 300);
  }
  const glog = await (await fetch(`${URL}/__fusebox/log`)).json();
  gen.paths = glog.entries.map((e) => [e.path, e.status, e.stream]);
  out[apiVersion].generate = gen;
}
console.log(JSON.stringify(out));
