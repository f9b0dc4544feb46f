// corpus_trace.cjs - a traced run of a real LLM client (the pinned `openai` or
// `@anthropic-ai/sdk` Node package) against `fusebox mock` playing a fault timeline, for the
// import corpus (tests/e2e/import_corpus.sh). Generalised from ../openai_trace.cjs.
//
// The client sends one call per arrival of a seeded Poisson process, instrumented by a real
// OpenTelemetry instrumentation of its SDK (openai: @opentelemetry/instrumentation-openai;
// anthropic: @traceloop/instrumentation-anthropic; one GenAI span per logical request) and by
// @opentelemetry/instrumentation-undici (one HTTP span per attempt, a child of the GenAI span,
// with the Retry-After headers). The finished spans go to TRACE as one OTLP/JSON
// ExportTraceServiceRequest (@opentelemetry/otlp-transformer's JsonTraceSerializer).
//
// Each call carries its own `x-fusebox-key: rN`, so that the mock's log groups the attempts
// of one logical request without guessing. META gets what the client itself knows, the truth
// the corpus check compares with besides the mock's log: per request its key, when it was
// due and when it started (ms after the mock's reset), its latency (the call's promise, from
// the call to its settling), how it ended (ok, or the SDK's error class and HTTP status), and
// how late the event loop ran (a loaded machine makes the run inconclusive, not wrong).
//
// With SESSIONS=MIN-MAX:THINK_MS (a conversation mode), each arrival starts a conversation
// instead: its count of turns drawn uniform on MIN..MAX, each next turn's call sent an
// exponential think time (mean THINK_MS, drawn here) after the one before settled, every
// turn's call inside an application span carrying `session.id` (@opentelemetry/api), so that
// the import reads the sessions from the span above the GenAI span (docs/import.md,
// "Sessions"). META then also has per request its session and turn, the think time drawn
// before it and the gap the client kept (from the previous call's settling to this start).
//
// With DEADLINE_MS, each call carries an AbortSignal.timeout(DEADLINE_MS) of its own: the
// application gives the call up after that long, its attempt in flight and any retry (the SDK
// throws APIUserAbortError; META's end is `timeout`).
//
// env: SDK (openai | anthropic), MOCK_URL, TRACE, META, RATE (per second), SECONDS, SEED,
//      MAX_RETRIES, TIMEOUT_MS (each unset or empty: the SDK's default), SESSIONS (unset:
//      independent calls), DEADLINE_MS (unset or empty: none)
'use strict';
const fs = require('fs');
const { monitorEventLoopDelay } = require('perf_hooks');
const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node');
const { InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { registerInstrumentations } = require('@opentelemetry/instrumentation');
const { UndiciInstrumentation } = require('@opentelemetry/instrumentation-undici');
const { JsonTraceSerializer } = require('@opentelemetry/otlp-transformer');
const api = require('@opentelemetry/api');

const env = process.env;
const sdk = env.SDK || 'openai';
if (sdk !== 'openai' && sdk !== 'anthropic') {
    console.error('corpus_trace.cjs: SDK is openai or anthropic, not ' + sdk);
    process.exit(2);
}
let sessions = null;
if (env.SESSIONS) {
    const m = /^(\d+)-(\d+):(\d+(?:\.\d+)?)$/.exec(env.SESSIONS);
    if (!m || +m[1] < 1 || +m[2] < +m[1] || +m[3] <= 0) {
        console.error('corpus_trace.cjs: SESSIONS is MIN-MAX:THINK_MS (1 <= MIN <= MAX, THINK_MS > 0), not ' +
            env.SESSIONS);
        process.exit(2);
    }
    sessions = { turns_min: +m[1], turns_max: +m[2], think_mean_ms: +m[3] };
}
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'fusebox-import-corpus' }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
});
provider.register();
const genai = sdk === 'openai'
    ? new (require('@opentelemetry/instrumentation-openai').OpenAIInstrumentation)()
    : new (require('@traceloop/instrumentation-anthropic').AnthropicInstrumentation)();
registerInstrumentations({
    instrumentations: [genai, new UndiciInstrumentation({
        headersToSpanAttributes: { responseHeaders: ['retry-after', 'retry-after-ms'] },
    })],
});
// after the instrumentations: they patch the SDK as it loads
const SDK = sdk === 'openai' ? require('openai') : require('@anthropic-ai/sdk');

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

// how a call ended, in the SDK's own terms
function ending(e) {
    if (!e) return { end: 'ok' };
    const name = e.constructor && e.constructor.name;
    if (name === 'APIConnectionTimeoutError') return { end: 'timeout', error: name };
    // the application's deadline (DEADLINE_MS: an AbortSignal.timeout per call) gave up
    if (name === 'APIUserAbortError') return { end: 'timeout', error: name };
    if (typeof e.status === 'number') return { end: 'status', status: e.status, error: name };
    if (name === 'APIConnectionError') return { end: 'connection', error: name };
    return { end: 'other', error: String(name || e) };
}

// what the run is doing, for the line a timeout prints (SIGTERM from the suite's `timeout`)
let phase = 'loading', records = [];
process.on('SIGTERM', () => {
    const open = records.filter((r) => r.start_ms !== undefined && r.latency_ms === undefined);
    const unstarted = records.filter((r) => r.start_ms === undefined).length;
    console.error('corpus_trace.cjs: stopped by SIGTERM (the suite\'s timeout) during ' + phase +
        ': ' + (records.length - open.length - unstarted) + ' of ' + records.length +
        ' calls settled, ' + open.length + ' unsettled (' +
        open.slice(0, 10).map((r) => r.key + ' since ' + Math.round(r.start_ms) + ' ms').join(', ') +
        (open.length > 10 ? ', ...' : '') + '), ' + unstarted + ' not started');
    process.exit(124);
});

async function main() {
    const rate = Number(env.RATE || 10), seconds = Number(env.SECONDS || 30);
    const rand = rng(Number(env.SEED || 7));
    const arrivals = [0];
    for (;;) {
        const t = arrivals[arrivals.length - 1] + (-Math.log(1 - rand()) / rate) * 1000;
        if (t >= seconds * 1000) break;
        arrivals.push(t);
    }
    const opts = { apiKey: 'x' };
    if (env.MAX_RETRIES) opts.maxRetries = Number(env.MAX_RETRIES);
    if (env.TIMEOUT_MS) opts.timeout = Number(env.TIMEOUT_MS);
    // the options of one call: its key, and with DEADLINE_MS the application's deadline, a
    // signal of its own that aborts the call (its attempt in flight, and any retry) after it
    const per = (key) => {
        const o = { headers: { 'x-fusebox-key': key } };
        if (env.DEADLINE_MS) o.signal = AbortSignal.timeout(Number(env.DEADLINE_MS));
        return o;
    };
    let call;
    if (sdk === 'openai') {
        const client = new SDK.OpenAI({ baseURL: env.MOCK_URL + '/v1', ...opts });
        call = (words, max, key) => client.chat.completions.create({
            model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'word '.repeat(words) }],
            max_completion_tokens: max,
        }, per(key));
    } else {
        const client = new SDK.Anthropic({ baseURL: env.MOCK_URL, ...opts });
        call = (words, max, key) => client.messages.create({
            model: 'claude-haiku-4-5', max_tokens: max,
            messages: [{ role: 'user', content: 'word '.repeat(words) }],
        }, per(key));
    }
    phase = 'the warm-up calls';
    // calls before time zero, so that loading the SDK's lazy parts, opening the connections
    // and the JIT do not stall the event loop inside the run (a stall there reads as a slow
    // start); their spans and log entries are dropped (the reset clears the mock's log)
    for (let round = 0; round < 3; round++)
        await Promise.all(Array.from({ length: 12 }, (_, i) =>
            call(20, 2, 'warm-up-' + round + '-' + i).catch(() => null)));
    await provider.forceFlush();
    exporter.reset();
    const lag = monitorEventLoopDelay({ resolution: 10 });
    await fetch(env.MOCK_URL + '/__fusebox/reset', { method: 'POST' }); // time zero of the timeline
    lag.enable();
    const t0 = Date.now(), p0 = performance.now();
    let late = 0;
    let calls;
    if (!sessions) {
        records = arrivals.map((at, i) => ({ key: 'r' + i, at_ms: at }));
        phase = 'the run';
        calls = arrivals.map((at, i) => new Promise((resolve) => {
            setTimeout(() => {
                const r = records[i];
                r.start_ms = performance.now() - p0;
                late = Math.max(late, r.start_ms - at);
                const words = 20 + Math.floor(rand() * 200);
                call(words, 2 + Math.floor(rand() * 15), r.key).then(() => null, (e) => e).then((e) => {
                    r.latency_ms = performance.now() - p0 - r.start_ms;
                    Object.assign(r, ending(e));
                    resolve();
                });
            }, Math.max(0, at - (performance.now() - p0)));
        }));
    } else {
        // every draw before time zero, in conversation order: the same turns, think times
        // and prompts every run, whatever the timing
        const tracer = api.trace.getTracer('fusebox-import-corpus-app');
        const convs = arrivals.map((at, c) => {
            const n = sessions.turns_min + Math.floor(rand() * (sessions.turns_max - sessions.turns_min + 1));
            return Array.from({ length: n }, (_, k) => {
                const r = {
                    key: 'r' + records.length, session: 's' + c, turn: k,
                    think_ms: k ? -Math.log(1 - rand()) * sessions.think_mean_ms : null,
                    words: 20 + Math.floor(rand() * 200), max: 2 + Math.floor(rand() * 15),
                };
                if (k === 0) r.at_ms = at;
                records.push(r);
                return r;
            });
        });
        const one = (r) => tracer.startActiveSpan('conversation turn', { attributes: { 'session.id': r.session } },
            (span) => call(r.words, r.max, r.key).then(() => null, (e) => e).then((e) => {
                span.end();
                return e;
            }));
        const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
        phase = 'the run';
        calls = convs.map((turns) => (async () => {
            let ended = null;
            for (const r of turns) {
                // due: the conversation's start, or the think time after the previous settled
                const due = ended === null ? r.at_ms : ended + r.think_ms;
                await sleep(due - (performance.now() - p0));
                r.start_ms = performance.now() - p0;
                late = Math.max(late, r.start_ms - due);
                if (ended !== null) r.gap_ms = r.start_ms - ended;
                const e = await one(r);
                ended = performance.now() - p0;
                r.latency_ms = ended - r.start_ms;
                Object.assign(r, ending(e));
            }
        })());
    }
    await Promise.all(calls);
    phase = 'the export of the spans';
    lag.disable();
    await provider.forceFlush();
    const spans = exporter.getFinishedSpans();
    fs.writeFileSync(env.TRACE, Buffer.from(JsonTraceSerializer.serializeRequest(spans)));
    fs.writeFileSync(env.META, JSON.stringify({
        sdk, t0_unix_ms: t0, rate, seconds, max_retries: env.MAX_RETRIES || null,
        timeout_ms: env.TIMEOUT_MS || null, deadline_ms: env.DEADLINE_MS || null, spans: spans.length, sessions: sessions &&
            { ...sessions, conversations: arrivals.length },
        lag_p99_ms: lag.percentile(99) / 1e6, lag_max_ms: lag.max / 1e6, late_max_ms: late,
        requests: records,
    }) + '\n');
}
main().catch((e) => { console.error(e); process.exit(1); });
