// record.mjs - record cockatiel's own decisions for tests/conformance/cockatiel-VERSION/.
//
//   node record.mjs COCKATIEL_DIR OUT_PARENT [SEED [COUNT [OVERLAP]]]
//
// COCKATIEL_DIR is cockatiel's npm package folder (node_modules/cockatiel), with
// @sinonjs/fake-timers installed beside it. Three kinds of case, each run
// through cockatiel's own policies under the fake clock:
//   breaker  circuitBreaker(handleAll, {halfOpenAfter, breaker: new ConsecutiveBreaker(n)}),
//            script "call T OUTCOME [DUR]", and overlapping calls: "admit T ID", "result T
//            ID ok|fail|cancel" (cancel: the call's AbortController, whose signal went to
//            execute(), is aborted)
//   retry    retry(handleAll, {maxAttempts, backoff}), script "retry OUTCOME K"; Math.random
//            is fusebox's generator seeded (42, 7) as the replay seeds it, and each retry
//            records the draws cockatiel took for it ("u") and the delay it made of them
//   wrap     wrap(retry, circuitBreaker), script "request T OUTCOME K"
// Writes OUT_PARENT/cockatiel-VERSION/cases.jsonl: the named edge cases, then COUNT
// random sequences drawn from SEED (a third of each kind), then OVERLAP (1000) random
// sequences of overlapping calls through circuitBreaker, from another stream of SEED.
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { args, FbRng, fuseboxDraws, installClock, libraryAt, parse, writeFolder } from '../common.mjs';

const USAGE = 'usage: node record.mjs COCKATIEL_DIR OUT_PARENT [SEED [COUNT [OVERLAP]]]\n' +
  '  COCKATIEL_DIR: node_modules/cockatiel (npm install cockatiel@4.0.0 @sinonjs/fake-timers@15.5.0)';
const { dir, out, seed, count } = args(USAGE);
const overlap = Number(process.argv[6] ?? 1000);
const { pkg, FakeTimers } = libraryAt(dir, 'cockatiel');
const ck = await import(pathToFileURL(join(resolve(dir), 'dist/index.js')));

// A call that ends with `outcome` after `dur` ms.
const action = (outcome, dur, clock) => () => new Promise((resolve, reject) => {
  const end = () => (outcome === 'ok' ? resolve('ok') : reject(new Error('503')));
  if (dur > 0) clock.setTimeout(end, dur); else end();
});

const NAMES = { [ck.CircuitState.Closed]: 'closed', [ck.CircuitState.Open]: 'open', [ck.CircuitState.HalfOpen]: 'half_open' };

function circuit (lib, log, at) {
  const cb = ck.circuitBreaker(ck.handleAll, {
    halfOpenAfter: lib.halfOpenAfter,
    breaker: new ck.ConsecutiveBreaker(lib.consecutive)
  });
  cb.onStateChange(s => {
    log.push({ t: Date.now(), from: at.state, to: NAMES[s] });
    at.state = NAMES[s];
    at.since = Date.now();
  });
  return cb;
}

function backoffOf (lib) {
  if (lib.backoff === 'ExponentialBackoff') {
    const opts = { ...lib.options };
    if (opts.generator) opts.generator = ck[opts.generator];
    return new ck.ExponentialBackoff(opts);
  }
  return lib.backoff === 'ConstantBackoff' ? new ck.ConstantBackoff(lib.interval ?? 0) : undefined;
}

const retryOptions = lib => {
  const o = {};
  if (lib.maxAttempts !== undefined) o.maxAttempts = lib.maxAttempts;
  const b = backoffOf(lib);
  if (b) o.backoff = b;
  return o;
};

// fusebox's keys for a case's library options: the preset's flat names.
function fuseboxKeys (lib) {
  const f = { preset: 'cockatiel' };
  for (const k of ['maxAttempts', 'consecutive', 'halfOpenAfter', 'backoff', 'interval']) {
    if (lib[k] !== undefined) f[k] = lib[k];
  }
  Object.assign(f, lib.options || {});
  return f;
}

async function runBreaker (lib, next, clock, opts) {
  const log = [];
  const script = [];
  const at = { state: 'closed', since: 0 };
  const cb = circuit(lib, log, at);
  const inFlight = new Map(); // "admit" calls by ID until their "result"
  for (let text; (text = next(log, at, Date.now())) !== null;) {
    script.push(text);
    const line = parse(text);
    await clock.tickAsync(line.t - Date.now());
    const t = Date.now();
    if (line.what === 'admit') {
      // The call gets its own AbortController, whose signal goes to execute() and on to the
      // call, which rejects with the signal's reason when it is aborted (as fetch does).
      const call = { ctrl: new AbortController(), settle: null };
      if (opts.preAbort && isCancel(next.peek?.(), line)) call.ctrl.abort();
      inFlight.set(line.id, call);
      // a call that waits (half-open, a trial in flight) is logged when cockatiel runs it
      cb.execute(({ signal }) => {
        log.push({ t: Date.now(), call: 'admitted' });
        return new Promise((resolve, reject) => {
          call.settle = o => (o === 'ok' ? resolve('ok') : reject(new Error('503')));
          const gone = () => reject(signal.reason);
          if (signal.aborted) gone(); else signal.addEventListener('abort', gone, { once: true });
        });
      }, call.ctrl.signal)
        .catch(e => { if (e instanceof ck.BrokenCircuitError) log.push({ t: Date.now(), call: 'rejected' }); });
      await clock.tickAsync(0);
      continue;
    }
    if (line.what === 'result') {
      const call = inFlight.get(line.id);
      inFlight.delete(line.id);
      if (call && line.outcome === 'cancel') call.ctrl.abort();
      else if (call && call.settle) call.settle(line.outcome);
      await clock.tickAsync(0);
      continue;
    }
    const fn = action(line.outcome, line.dur, clock);
    let invoked = false;
    const p = cb.execute(() => { invoked = true; log.push({ t, call: 'admitted' }); return fn(); })
      .catch(e => { if (e instanceof ck.BrokenCircuitError) log.push({ t, call: 'rejected' }); });
    if (invoked) await clock.tickAsync(line.dur);
    await p;
  }
  return { script, expect: log };
}

// Math.random is fusebox's stream; each retry's draws are recorded with it.
async function runRetry (lib, next, clock) {
  const log = [];
  const script = [];
  const rng = fuseboxDraws();
  let pending = [];
  Math.random = () => { const u = rng.uniform(); pending.push(u); return u; };
  for (let text; (text = next()) !== null;) {
    script.push(text);
    const line = parse(text);
    const policy = ck.retry(ck.handleAll, retryOptions(lib));
    let attempts = 0;
    policy.onRetry(r => {
      log.push({ retry: r.attempt, delay_us: Math.floor(r.delay * 1000), u: pending });
      pending = [];
    });
    let end = 'success';
    const p = policy.execute(() => {
      attempts++;
      if (line.k < 0 || attempts <= line.k) throw new Error('503');
      return 'ok';
    }).catch(() => { end = 'attempts'; });
    await clock.runAllAsync();
    await p;
    if (pending.length) throw new Error(`cockatiel drew ${pending.length} numbers after its last retry`);
    log.push({ attempts, end });
  }
  return { script, expect: log };
}

// wrap(retry, circuitBreaker): every try asks the breaker; handleAll retries its rejections too.
async function runWrap (lib, next, clock) {
  const log = [];
  const script = [];
  const rng = fuseboxDraws();
  Math.random = () => rng.uniform();
  const at = { state: 'closed', since: 0 };
  const cb = circuit(lib, log, at);
  const retry = ck.retry(ck.handleAll, retryOptions(lib));
  const rejected = e => e instanceof ck.BrokenCircuitError;
  retry.onRetry(r => { if (rejected(r.error)) log.push({ t: Date.now(), call: 'rejected' }); });
  const policy = ck.wrap(retry, cb);
  for (let text; (text = next(log, at, Date.now())) !== null;) {
    script.push(text);
    const line = parse(text);
    await clock.tickAsync(line.t - Date.now());
    let sent = 0;
    let end = 'success';
    const p = policy.execute(() => {
      log.push({ t: Date.now(), call: 'admitted' });
      sent++;
      if (line.outcome !== 'ok' && (line.k < 0 || sent <= line.k)) throw new Error('503');
      return 'ok';
    }).catch(e => {
      if (rejected(e)) log.push({ t: Date.now(), call: 'rejected' });
      end = rejected(e) && sent === 0 ? 'breaker_open' : 'exhausted';
    });
    await clock.runAllAsync();
    await p;
    log.push({ t: Date.now(), end });
  }
  return { script, expect: log };
}

async function record (kind, lib, next, opts = {}) {
  const clock = installClock(FakeTimers);
  const random = Math.random;
  try {
    if (kind === 'retry') return await runRetry(lib, next, clock);
    if (kind === 'wrap') return await runWrap(lib, next, clock);
    return await runBreaker(lib, next, clock, opts);
  } finally {
    Math.random = random;
    clock.uninstall();
  }
}

// A fixed script; peek() shows the line after the one just taken.
const fixed = script => {
  let i = 0;
  const next = () => (i < script.length ? script[i++] : null);
  next.peek = () => (i < script.length ? script[i] : null);
  return next;
};
// "result T ID cancel" for the call `admit` made at the same time.
const isCancel = (text, admit) => {
  if (!text) return false;
  const l = parse(text);
  return l.what === 'result' && l.outcome === 'cancel' && l.id === admit.id && l.t === admit.t;
};
const expo = options => ({ backoff: 'ExponentialBackoff', options });

// The named edge cases: [kind, name, library options, script, why it is skipped (not modelled),
// options of the run: {preAbort: an "admit" followed by its "cancel" at the same time aborts
// the signal before execute() is called}].
const EDGES = [
  ['breaker', 'ConsecutiveBreaker(5) trips on the 5th failure in a row; a success resets the run',
    { halfOpenAfter: 10000, consecutive: 5 },
    ['call 0 fail', 'call 10 fail', 'call 20 ok', 'call 30 fail', 'call 40 fail', 'call 50 fail',
      'call 60 fail', 'call 70 fail', 'call 80 ok', 'call 9000 ok']],
  ['breaker', 'halfOpenAfter: rejected 1 ms before the deadline, the trial call at it; success closes',
    { halfOpenAfter: 1000, consecutive: 2 },
    ['call 0 fail', 'call 5 fail 20', 'call 100 ok', 'call 1024 ok', 'call 1025 ok 30', 'call 1100 fail',
      'call 1200 fail', 'call 2199 ok', 'call 2200 ok']],
  ['breaker', 'a failed trial call opens again for halfOpenAfter', { halfOpenAfter: 500, consecutive: 3 },
    ['call 0 fail', 'call 1 fail', 'call 2 fail', 'call 502 fail 7', 'call 600 ok', 'call 1008 ok',
      'call 1009 ok', 'call 1010 fail', 'call 1011 fail', 'call 1012 fail']],
  ['breaker', 'ConsecutiveBreaker(1): every failure opens; halfOpenAfter counts from the failure, not the call',
    { halfOpenAfter: 100, consecutive: 1 },
    ['call 0 fail 30', 'call 129 ok', 'call 130 fail 50', 'call 279 ok', 'call 280 ok', 'call 281 fail']],
  ['breaker', 'a slow trial call: the deadline counts from the failure that reopened',
    { halfOpenAfter: 200, consecutive: 2 },
    ['call 0 fail', 'call 1 fail', 'call 201 fail 99', 'call 499 ok', 'call 500 ok 300', 'call 800 fail']],
  ['breaker', 'halfOpenAfter 1 ms', { halfOpenAfter: 1, consecutive: 1 },
    ['call 0 fail', 'call 0 ok', 'call 1 ok', 'call 1 fail', 'call 2 fail', 'call 3 ok']],
  ['breaker', 'calls in flight: a failure that arrives after the breaker opened',
    { halfOpenAfter: 1000, consecutive: 2 },
    ['admit 0 1', 'call 1 fail', 'call 2 fail', 'result 3 1 fail', 'call 1002 ok', 'call 1003 fail']],
  ['breaker', 'half-open: a call while the trial is in flight waits for its verdict',
    { halfOpenAfter: 100, consecutive: 1 },
    ['call 0 fail', 'admit 100 1', 'admit 101 2', 'result 150 1 ok', 'result 151 2 ok', 'call 152 ok'],
    'calls during the half-open trial wait for its verdict in cockatiel (and then run); fusebox rejects them'],
  ['breaker', 'half-open: a late success from a call admitted while closed does not close',
    { halfOpenAfter: 100, consecutive: 1 },
    ['admit 0 1', 'call 1 fail', 'admit 101 2', 'result 102 1 ok', 'result 103 2 fail', 'call 104 ok']],
  ['breaker', 'half-open: a late failure from a call admitted while closed',
    { halfOpenAfter: 100, consecutive: 1 },
    ['admit 0 1', 'call 1 fail', 'admit 101 2', 'result 102 1 fail', 'call 103 ok', 'result 104 2 ok', 'call 205 ok']],
  ['breaker', 'cancel: an aborted call in closed is a failure (its promise rejects; handleAll)',
    { halfOpenAfter: 1000, consecutive: 2 },
    ['admit 0 1', 'result 5 1 cancel', 'admit 10 2', 'result 20 2 ok', 'admit 30 3', 'result 31 3 cancel',
      'admit 40 4', 'result 41 4 cancel', 'call 42 ok', 'result 43 2 cancel']],
  ['breaker', 'cancel before the call runs: cockatiel still runs it with the aborted signal, a failure; while open, rejected',
    { halfOpenAfter: 100, consecutive: 1 },
    ['admit 0 1', 'result 0 1 cancel', 'admit 50 2', 'result 50 2 cancel', 'admit 100 3', 'result 100 3 cancel',
      'call 199 ok', 'call 200 ok', 'call 201 fail'], undefined, { preAbort: true }],
  ['breaker', 'cancel of the half-open trial: a failure, the breaker opens again for halfOpenAfter',
    { halfOpenAfter: 100, consecutive: 1 },
    ['call 0 fail', 'admit 100 1', 'result 150 1 cancel', 'call 151 ok', 'call 249 ok', 'call 250 ok', 'call 251 fail']],
  ['breaker', 'cancel of a call admitted while closed, after the breaker opened: it does not restart the open period',
    { halfOpenAfter: 100, consecutive: 1 },
    ['admit 0 1', 'call 10 fail', 'result 50 1 cancel', 'call 109 ok', 'call 110 ok', 'call 111 fail']],
  ['breaker', 'cancel of a call waiting for the half-open verdict: the trial succeeds and it never runs',
    { halfOpenAfter: 100, consecutive: 1 },
    ['call 0 fail', 'admit 100 1', 'admit 110 2', 'result 120 2 cancel', 'result 150 1 ok', 'call 151 fail'],
    'calls during the half-open trial wait for its verdict in cockatiel (and then run, or, aborted meanwhile, end with TaskCancelledError uncounted); fusebox rejects them'],
  ['breaker', 'a late success resets the run: a late failure then needs the whole run again to reopen half-open',
    { halfOpenAfter: 100, consecutive: 2 },
    ['admit 0 1', 'admit 0 2', 'admit 0 3', 'call 1 fail', 'call 2 fail', 'admit 102 4', 'result 103 1 ok',
      'result 104 2 fail', 'result 105 3 fail', 'result 106 4 ok', 'call 204 ok', 'call 205 ok', 'call 206 fail']],
  ['breaker', 'a trial outlives its half-open period (a late failure reopened): its result is ignored',
    { halfOpenAfter: 100, consecutive: 1 },
    ['admit 0 1', 'call 1 fail', 'admit 101 2', 'result 102 1 fail', 'call 202 ok', 'result 203 2 fail',
      'call 204 ok']],
  ['breaker', 'a late failure while open changes nothing; a late cancel in half-open reopens it',
    { halfOpenAfter: 100, consecutive: 1 },
    ['admit 0 1', 'admit 0 2', 'call 1 fail', 'result 50 1 fail', 'admit 101 3', 'result 102 2 cancel',
      'result 103 3 ok', 'call 201 ok', 'call 202 ok']],
  ['retry', 'ExponentialBackoff (decorrelated jitter): maxAttempts counts retries',
    { maxAttempts: 4, ...expo({}) }, ['retry fail -1', 'retry fail 2', 'retry fail 0']],
  ['retry', "ExponentialBackoff's decorrelated jitter at exponent 3, capped by maxDelay",
    { maxAttempts: 8, ...expo({ initialDelay: 200, maxDelay: 5000, exponent: 3 }) }, ['retry fail -1', 'retry fail -1']],
  ['retry', 'decorrelated jitter with exponent 1.5 and a cap every draw reaches',
    { maxAttempts: 10, ...expo({ initialDelay: 1000, maxDelay: 1500, exponent: 1.5 }) }, ['retry fail -1']],
  ['retry', 'decorrelated jitter over 30 retries: the default maxDelay caps',
    { maxAttempts: 30, ...expo({}) }, ['retry fail -1']],
  ['retry', 'noJitterGenerator: min(maxDelay, initialDelay * 2^attempt)',
    { maxAttempts: 7, ...expo({ initialDelay: 100, maxDelay: 2000, generator: 'noJitterGenerator' }) }, ['retry fail -1']],
  ['retry', 'noJitterGenerator ignores exponent',
    { maxAttempts: 5, ...expo({ initialDelay: 10, exponent: 3, generator: 'noJitterGenerator' }) }, ['retry fail -1']],
  ['retry', 'fullJitterGenerator floors whole milliseconds',
    { maxAttempts: 6, ...expo({ initialDelay: 300, maxDelay: 4000, generator: 'fullJitterGenerator' }) },
    ['retry fail -1', 'retry fail 3']],
  ['retry', 'halfJitterGenerator',
    { maxAttempts: 6, ...expo({ initialDelay: 300, maxDelay: 4000, generator: 'halfJitterGenerator' }) }, ['retry fail -1']],
  ['retry', 'halfJitterGenerator with a sub-millisecond initialDelay',
    { maxAttempts: 6, ...expo({ initialDelay: 0.5, maxDelay: 7, generator: 'halfJitterGenerator' }) }, ['retry fail -1']],
  ['retry', 'ConstantBackoff(interval), and retry\'s default ConstantBackoff(0)',
    { maxAttempts: 3, backoff: 'ConstantBackoff', interval: 250 }, ['retry fail -1', 'retry fail 1']],
  ['retry', 'retry with no backoff given retries at once', { maxAttempts: 2 }, ['retry fail -1', 'retry fail 2']],
  ['retry', 'maxAttempts: 0 makes one call', { maxAttempts: 0 }, ['retry fail -1']],
  ['retry', 'maxAttempts unset (Infinity): a success after 40 failures', { backoff: 'ConstantBackoff', interval: 1 },
    ['retry fail 40']],
  ['wrap', 'wrap(retry, circuitBreaker): the retry retries the breaker\'s rejections and waits into half-open',
    { maxAttempts: 3, consecutive: 2, halfOpenAfter: 1000, backoff: 'ConstantBackoff', interval: 400 },
    ['request 0 fail 3', 'request 1300 fail -1', 'request 5000 ok 0', 'request 6000 fail 1',
      'request 7000 fail -1', 'request 9000 fail 2']],
  ['wrap', 'wrap: a zero backoff asks the breaker again at once and is rejected',
    { maxAttempts: 2, consecutive: 1, halfOpenAfter: 500 }, ['request 0 fail -1', 'request 10 ok 0']],
  ['wrap', 'wrap: a retry delay that lands exactly on halfOpenAfter',
    { maxAttempts: 2, consecutive: 1, halfOpenAfter: 500, backoff: 'ConstantBackoff', interval: 250 },
    ['request 0 fail 1', 'request 1000 fail -1', 'request 3000 ok 0']]
];

// A random ExponentialBackoff or ConstantBackoff (or none).
function randomBackoff (g) {
  const r = g.below(3);
  if (r === 0) return {};
  if (r === 1) return { backoff: 'ConstantBackoff', interval: g.pick([0, 1, 10, 100, 250, 1000]) };
  const options = {};
  if (g.chance(0.7)) options.initialDelay = g.pick([1, 10, 50, 128, 200, 1000, 0.5]);
  if (g.chance(0.7)) options.maxDelay = g.pick([5, 100, 1000, 5000, 30000]);
  if (g.chance(0.5)) options.exponent = g.pick([1, 1.5, 2, 3, 4]);
  if (g.chance(0.6)) options.generator = g.pick(['decorrelatedJitterGenerator', 'noJitterGenerator', 'fullJitterGenerator', 'halfJitterGenerator']);
  return expo(options);
}

function randomCase (g, i) {
  const kind = ['breaker', 'retry', 'wrap'][i % 3];
  const lib = {};
  if (kind !== 'retry') {
    lib.halfOpenAfter = g.pick([1, 10, 100, 500, 1000, 5000]);
    lib.consecutive = g.between(1, 6);
  }
  if (kind === 'wrap') {
    // Whole milliseconds of at least 1: Node's timers make a shorter or fractional delay a
    // matter of the runtime (below 1 ms waits 1 ms), which the retry kind records exactly.
    Object.assign(lib, g.chance(0.5)
      ? { backoff: 'ConstantBackoff', interval: g.pick([1, 10, 100, 250, 1000]) }
      : expo({ initialDelay: g.pick([1, 10, 50, 128, 200]), maxDelay: g.pick([100, 1000, 5000]), generator: 'noJitterGenerator' }));
  } else if (kind !== 'breaker') {
    Object.assign(lib, randomBackoff(g));
  }
  if (kind === 'wrap' || (kind === 'retry' && g.chance(0.9))) lib.maxAttempts = g.between(0, 8);
  const n = kind === 'retry' ? g.between(1, 4) : g.between(4, 25);
  let lines = 0;
  let free = 0;
  const time = (at, now) => {
    let t = free;
    const r = g.below(6);
    if (r === 1) t = now + g.between(0, 2 * lib.halfOpenAfter);
    if (r === 2 && at.state === 'open') t = at.since + lib.halfOpenAfter + g.pick([-1, 0, 0, 1]);
    if (r >= 3) t = now + g.between(0, 20);
    return Math.max(t, free, now);
  };
  const k = () => g.chance(0.4) || lib.maxAttempts === undefined ? g.between(0, (lib.maxAttempts ?? 8) + 1) : -1;
  const next = {
    breaker: (log, at, now) => {
      if (lines++ >= n) return null;
      const t = time(at, now);
      const o = g.pick(['ok', 'fail', 'fail']);
      const dur = g.chance(0.3) ? g.between(1, 300) : 0;
      free = t + dur;
      return dur ? `call ${t} ${o} ${dur}` : `call ${t} ${o}`;
    },
    retry: () => (lines++ >= n ? null : `retry fail ${k()}`),
    wrap: (log, at, now) => (lines++ >= n ? null : `request ${time(at, now)} ${g.pick(['fail', 'fail', 'ok'])} ${k()}`)
  }[kind];
  return { kind, name: `random ${kind} ${i}`, lib, next };
}

// One random sequence of overlapping calls through circuitBreaker: calls admitted and left in
// flight ("admit"), their results in any order later ("result": ok, fail, or cancel: the
// caller aborts the signal it gave execute()), and whole calls ("call") between them. A call
// made while half-open would wait for the trial's verdict (not modelled): the sequence then
// reports a result instead, so every half-open period ends by its trial or a late failure.
function overlapCase (g, i) {
  const lib = { halfOpenAfter: g.pick([1, 10, 100, 500, 1000]), consecutive: g.between(1, 5) };
  const n = g.between(6, 30);
  const idle = Array.from({ length: 16 }, (_, k) => k);
  const flying = [];
  let lines = 0;
  let free = 0; // the first ms after the last "call" ended
  const next = (log, at, now) => {
    if (lines++ >= n) return null;
    let t = Math.max(free, now);
    const r = g.below(6);
    if (r === 1) t += g.between(0, 2 * lib.halfOpenAfter);
    if (r === 2 && at.state === 'open') t = Math.max(t, at.since + lib.halfOpenAfter + g.pick([-1, 0, 0, 1]));
    if (r >= 3) t += g.between(0, 20);
    const u = g.uniform();
    if (flying.length && (at.state === 'half_open' || u < 0.4 || !idle.length)) {
      const id = flying.splice(g.below(flying.length), 1)[0];
      idle.push(id);
      return `result ${t} ${id} ${g.pick(['ok', 'ok', 'fail', 'fail', 'cancel'])}`;
    }
    if (u < 0.75) {
      const id = idle.splice(g.below(idle.length), 1)[0];
      flying.push(id);
      return `admit ${t} ${id}`;
    }
    const o = g.pick(['ok', 'fail', 'fail']);
    const dur = g.chance(0.3) ? g.between(1, 300) : 0;
    free = t + dur;
    return dur ? `call ${t} ${o} ${dur}` : `call ${t} ${o}`;
  };
  return { kind: 'breaker', name: `random overlap ${i}`, lib, next };
}

const cases = [];
const add = (kind, name, lib, r, random) => cases.push({ name, random, fusebox: fuseboxKeys(lib), lib: { kind, ...lib }, ...r });
for (const [kind, name, lib, script, skip, opts] of EDGES) {
  add(kind, name, lib, { ...(skip ? { skip } : {}), ...await record(kind, lib, fixed(script), opts) });
}
const g = new FbRng(seed, 2);
for (let i = 1; i <= count; i++) {
  const c = randomCase(g, i);
  add(c.kind, c.name, c.lib, await record(c.kind, c.lib, c.next), i);
}
const g2 = new FbRng(seed, 3);
for (let i = 1; i <= overlap; i++) {
  const c = overlapCase(g2, i);
  add(c.kind, c.name, c.lib, await record(c.kind, c.lib, c.next), count + i);
}
const folder = join(out, `cockatiel-${pkg.version}`);
writeFolder(folder, cases, `# cockatiel ${pkg.version}

Recorded from cockatiel ${pkg.version} (npm), its policies run under
@sinonjs/fake-timers, by tests/conformance/recorders/cockatiel/record.mjs:

    node tests/conformance/recorders/cockatiel/record.mjs node_modules/cockatiel tests/conformance ${seed} ${count} ${overlap}

${EDGES.length} named edge cases, then ${count} random sequences drawn from seed ${seed}
(stream 2), a third each of circuitBreaker(handleAll, {halfOpenAfter,
breaker: new ConsecutiveBreaker(n)}) ("call" scripts), retry(handleAll, {maxAttempts,
backoff}) ("retry" scripts) and wrap(retry, circuitBreaker) ("request" scripts), then
${overlap} random sequences of overlapping calls through circuitBreaker ("random overlap",
from seed ${seed}, stream 3): calls admitted and left in flight ("admit"), their results
later in any order ("result": ok, fail, or cancel), whole calls between them; ${cases.length}
cases in all.
Cancellation: each admitted call has its own AbortController, whose signal goes to
execute(fn, signal) and so to the call, which rejects with the signal's reason when it
is aborted (as fetch does); "result T ID cancel" aborts it at T. Under handleAll that
is a failure. One named case aborts the signal before execute() is called (cockatiel
runs the call all the same). A call made while a half-open trial is in flight waits for
the trial's verdict in cockatiel, which fusebox does not model: the named cases that do
it are skipped, and the random sequences never do it (while half-open they report a
result instead).
The random wrap sequences use backoffs of whole milliseconds (ConstantBackoff, or
ExponentialBackoff's noJitterGenerator from a whole initialDelay): how a fractional
delay is rounded onto the clock is the timer's business (@sinonjs/fake-timers
truncates it, Node waits for the next whole millisecond), so jittered delays are
recorded by the retry kind, exactly, instead.
"lib" holds the options as cockatiel takes them ("kind" says which policy; "options"
are ExponentialBackoff's); "fusebox" the same as the preset's flat keys.
Math.random is fusebox's generator (core/rng.c) seeded (42, 7), as the replay seeds
fusebox's, so each retry's "u" lists the draws cockatiel took for it and "delay_us"
is its delay (whole microseconds, rounded down). Edge cases with a "skip" are
recorded but not modelled (docs/presets.md lists them). \`make conformance-record\`
re-records.
`);
console.log(`${folder}: ${cases.length} cases`);
