// openai_trace.cjs - a traced run of the real `openai` Node client against `fusebox mock`.
//
// The official client (the pinned `openai` package) sends chat completions at the
// arrival times of a seeded Poisson process, instrumented by the pinned
// @opentelemetry/instrumentation-openai (one GenAI span per logical request) and
// @opentelemetry/instrumentation-undici (one HTTP span per attempt, a child of the GenAI
// span, with the Retry-After headers recorded). The finished spans are serialised with
// @opentelemetry/otlp-transformer's JsonTraceSerializer, the encoder the OTLP/HTTP JSON
// exporter uses, into TRACE (one ExportTraceServiceRequest), and into TRACE.jsonl (one
// request per line, 100 spans each). META gets what the run knows that the trace does not:
// when the mock's timeline started, and how late the event loop ran (a loaded machine
// makes the run inconclusive, not wrong).
//
// env: MOCK_URL, TRACE, META, RATE (per second), SECONDS, SEED, TIMEOUT_MS (client timeout),
//      NO_HTTP=1 (no undici instrumentation: one span per logical request),
//      TOKENS=5,48 (each request's max_completion_tokens drawn from that list; default 2 to 16),
//      MAX_RETRIES (the client's maxRetries; default the client's own, 2)
'use strict';
const fs = require('fs');
const { monitorEventLoopDelay } = require('perf_hooks');
const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
const { InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { OpenAIInstrumentation } = require('@opentelemetry/instrumentation-openai');
const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici');
const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer');

const env = process.env;
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'fusebox-import-test' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
});
provider.register();
const instrumentations = [new OpenAIInstrumentation()];
if (!env.NO_HTTP)
    instrumentations.push(new UndiciInstrumentation({
        headersToSpanAttributes: { responseHeaders: ['retry-after', 'retry-after-ms'] },
    }));
registerInstrumentations({ instrumentations });
const OpenAI = require('openai'); // after the instrumentations: they patch it as it loads

// mulberry32: a small seeded generator, so that the arrivals are the same every run
function rng(seed) {
    let a = seed >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}

async function main() {
    const rate = Number(env.RATE || 8), seconds = Number(env.SECONDS || 40);
    const rand = rng(Number(env.SEED || 7));
    const arrivals = [0];
    for (;;) {
        const t = arrivals[arrivals.length - 1] + (-Math.log(1 - rand()) / rate) * 1000;
        if (t >= seconds * 1000) break;
        arrivals.push(t);
    }
    const tokens = env.TOKENS ? env.TOKENS.split(',').map(Number) : null;
    const client = new OpenAI({ baseURL: env.MOCK_URL + '/v1', apiKey: 'x',
                                timeout: Number(env.TIMEOUT_MS || 2000),
                                ...(env.MAX_RETRIES ? { maxRetries: Number(env.MAX_RETRIES) } : {}) });
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    await fetch(env.MOCK_URL + '/__fusebox/reset', { method: 'POST' }); // time zero of the timeline
    const t0 = Date.now(), p0 = performance.now();
    let late = 0, ok = 0, failed = 0;
    const calls = arrivals.map((at) => new Promise((resolve) => {
        setTimeout(() => {
            late = Math.max(late, performance.now() - p0 - at);
            const words = 20 + Math.floor(rand() * 200);
            client.chat.completions.create({
                model: 'gpt-4o-mini',
                messages: [{ role: 'user', content: 'word '.repeat(words) }],
                max_completion_tokens: tokens ? tokens[Math.floor(rand() * tokens.length)]
                                              : 2 + Math.floor(rand() * 15),
            }).then(() => ok++, () => failed++).then(resolve);
        }, Math.max(0, at - (performance.now() - p0)));
    }));
    await Promise.all(calls);
    lag.disable();
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    fs.writeFileSync(env.TRACE, Buffer.from(JsonTraceSerializer.serializeRequest(spans)));
    const lines = [];
    for (let i = 0; i < spans.length; i += 100)
        lines.push(Buffer.from(JsonTraceSerializer.serializeRequest(spans.slice(i, i + 100))).toString());
    fs.writeFileSync(env.TRACE + 'l', lines.join('\n') + '\n');
    fs.writeFileSync(env.META, JSON.stringify({
        t0_unix_ms: t0, requests: arrivals.length, ok, failed, spans: spans.length,
        lag_p99_ms: lag.percentile(99) / 1e6, lag_max_ms: lag.max / 1e6, late_max_ms: late,
    }) + '\n');
}
main().catch((e) => { console.error(e); process.exit(1); });
