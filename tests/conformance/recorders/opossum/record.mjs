// record.mjs - record opossum's own decisions for tests/conformance/opossum-VERSION/.
//
//   node record.mjs OPOSSUM_DIR OUT_PARENT [SEED [COUNT [OVERLAP]]]
//
// OPOSSUM_DIR is opossum's npm package folder (node_modules/opossum), with
// @sinonjs/fake-timers installed beside it. The recorder runs opossum's
// CircuitBreaker under the fake clock, call by call, and writes
// OUT_PARENT/opossum-VERSION/cases.jsonl: the named edge cases below, then
// COUNT random sequences drawn from SEED, then OVERLAP (1000) random sequences of
// overlapping calls ("admit", "result" ok/fail/cancel) from another stream of SEED.
// Each case's "expect" is the log
// tests/diff/resilience/driver.c prints for its script (with --timers: opossum
// moves to half-open and rotates its window on timers): every call admitted or
// rejected, every transition with its time.
import { join, resolve } from 'node:path';
import { args, deferred, FbRng, installClock, libraryAt, parse, writeFolder } from '../common.mjs';

const USAGE = 'usage: node record.mjs OPOSSUM_DIR OUT_PARENT [SEED [COUNT [OVERLAP]]]\n' +
  '  OPOSSUM_DIR: node_modules/opossum (npm install opossum@10.0.0 @sinonjs/fake-timers@15.5.0)';
const { dir, out, seed, count } = args(USAGE);
const overlap = Number(process.argv[6] ?? 1000);
const { pkg, require, FakeTimers } = libraryAt(dir, 'opossum');
const CircuitBreaker = require(resolve(dir));

// A call that ends with `outcome` after `dur` ms (a timeout never ends by itself).
const action = (outcome, dur, clock) => () => new Promise((resolve, reject) => {
  if (outcome === 'timeout') return;
  const end = () => (outcome === 'ok' ? resolve('ok') : reject(new Error('503')));
  if (dur > 0) clock.setTimeout(end, dur); else end();
});

// Run opossum on a case; `next(log, state)` returns the next script line or null
// (a fixed script, or a random one drawn as the breaker goes).
async function run (lib, next) {
  const clock = installClock(FakeTimers);
  const log = [];
  const script = [];
  try {
    let call = () => Promise.resolve('ok');
    const breaker = new CircuitBreaker((...a) => call(...a), { ...lib });
    const at = { state: 'closed', since: 0 };
    const to = s => () => { log.push({ t: Date.now(), from: at.state, to: s }); at.state = s; at.since = Date.now(); };
    breaker.on('open', to('open'));
    breaker.on('halfOpen', to('half_open'));
    breaker.on('close', to('closed'));
    const inFlight = new Map(); // "admit" calls by ID until their "result"
    for (let text; (text = next(log, at, Date.now())) !== null;) {
      script.push(text);
      const line = parse(text);
      await clock.tickAsync(line.t - Date.now());
      const t = Date.now();
      if (line.what === 'admit') {
        // The caller's AbortController: its signal is the action's argument (fire(signal)),
        // and the action rejects with the signal's reason when it is aborted (as fetch does).
        const ctrl = new AbortController();
        const d = deferred();
        let invoked = false;
        call = signal => {
          invoked = true;
          log.push({ t, call: 'admitted' });
          signal.addEventListener('abort', () => d.reject(signal.reason), { once: true });
          return d.promise;
        };
        breaker.fire(ctrl.signal).catch(() => {});
        if (invoked) inFlight.set(line.id, { d, ctrl }); else log.push({ t, call: 'rejected' });
        continue;
      }
      if (line.what === 'result') {
        const c = inFlight.get(line.id);
        inFlight.delete(line.id);
        if (c && line.outcome === 'cancel') c.ctrl.abort();
        else if (c) (line.outcome === 'ok' ? c.d.resolve('ok') : c.d.reject(new Error('503')));
        await clock.tickAsync(0);
        continue;
      }
      let invoked = false;
      const fn = action(line.outcome, line.dur, clock);
      call = () => { invoked = true; log.push({ t, call: 'admitted' }); return fn(); };
      const p = breaker.fire().catch(() => {});
      if (!invoked) log.push({ t, call: 'rejected' });
      // A rejected call ends at once; the driver does not move the clock for it either.
      if (invoked) await clock.tickAsync(line.outcome === 'timeout' ? breaker.options.timeout : line.dur);
      await p;
    }
    breaker.shutdown();
  } finally {
    clock.uninstall();
  }
  return { script, expect: log };
}

const fixed = script => { let i = 0; return () => (i < script.length ? script[i++] : null); };

// The named edge cases: [name, options, script, why it is skipped (not modelled)].
const EDGES = [
  ['defaults: more than 50 % of the fires failed opens; half-open by the timer at resetTimeout', {},
    ['call 0 ok', 'call 100 fail', 'call 200 fail', 'call 300 ok', 'call 15000 ok', 'call 30199 ok',
      'call 30200 ok', 'call 30300 ok']],
  ['rejected calls are fires: they dilute the error rate after the breaker closes', { resetTimeout: 2000 },
    ['call 0 fail', 'call 500 ok', 'call 1000 ok', 'call 1500 ok', 'call 2000 ok', 'call 2100 fail',
      'call 2200 fail', 'call 2300 fail', 'call 2400 ok', 'call 5000 fail']],
  ['the window survives a close: old failures count against the next call',
    { resetTimeout: 1000, errorThresholdPercentage: 40 },
    ['call 0 ok', 'call 10 fail', 'call 1010 ok', 'call 1020 fail', 'call 1030 ok', 'call 3000 ok',
      'call 3100 fail', 'call 3200 fail']],
  ['buckets rotate on the timer: failures leave the window rollingCountTimeout later',
    { rollingCountTimeout: 1000, rollingCountBuckets: 4, resetTimeout: 500 },
    ['call 0 ok', 'call 100 ok', 'call 249 ok', 'call 250 fail', 'call 999 ok', 'call 1000 ok',
      'call 1249 fail', 'call 1250 fail', 'call 1300 fail']],
  ['volumeThreshold: no opening below that many fires', { volumeThreshold: 4 },
    ['call 0 fail', 'call 10 fail', 'call 20 fail', 'call 30 fail', 'call 40 ok']],
  ['timeout: a call longer than 10 s fails at 10 s; alone in the window it opens the breaker', {},
    ['call 0 timeout', 'call 10001 ok', 'call 40000 ok', 'call 40001 fail 20']],
  ['a failed trial call opens again; a slow trial holds half-open', { resetTimeout: 1000, timeout: 3000 },
    ['call 0 fail', 'call 1000 fail', 'call 2000 ok 400', 'call 2500 ok', 'call 2600 fail']],
  ['errorThresholdPercentage exactly met does not open (strictly more)', { errorThresholdPercentage: 50 },
    ['call 0 ok', 'call 10 fail', 'call 20 ok', 'call 30 fail', 'call 40 fail']],
  ['volumeThreshold exactly met opens', { volumeThreshold: 3, resetTimeout: 100 },
    ['call 0 fail', 'call 1 fail', 'call 2 fail', 'call 3 ok', 'call 102 ok', 'call 103 ok']],
  ['resetTimeout: rejected 1 ms before the timer, the trial exactly at it', { resetTimeout: 700 },
    ['call 0 fail', 'call 699 ok', 'call 700 ok', 'call 701 fail', 'call 1401 ok', 'call 1402 ok']],
  ['a trial that takes longer than the next bucket rotation', { resetTimeout: 300, rollingCountTimeout: 400, rollingCountBuckets: 2 },
    ['call 0 fail', 'call 300 ok 250', 'call 550 fail', 'call 850 fail 199', 'call 1049 ok']],
  ['a call exactly at a bucket boundary lands in the new bucket', { rollingCountTimeout: 100, rollingCountBuckets: 1, resetTimeout: 50 },
    ['call 0 ok', 'call 99 fail', 'call 100 fail', 'call 150 ok', 'call 199 fail', 'call 200 ok']],
  ['errorThresholdPercentage 0: any failure opens', { errorThresholdPercentage: 0, resetTimeout: 10 },
    ['call 0 ok', 'call 1 ok', 'call 2 fail', 'call 12 ok', 'call 13 fail']],
  ['timeout false: no call times out', { timeout: false, resetTimeout: 10 },
    ['call 0 ok 20000', 'call 20000 fail', 'call 20010 ok']],
  ['a timeout during half-open opens again', { timeout: 50, resetTimeout: 100 },
    ['call 0 fail', 'call 100 timeout', 'call 150 ok', 'call 250 ok']],
  ['a failure at a bucket boundary from a call older than the bucket counts before the rotation',
    { errorThresholdPercentage: 60, resetTimeout: 100 },
    ['call 0 ok', 'call 0 ok', 'call 0 timeout', 'call 10019 fail']],
  ['... and with one bucket, the failure leaves with it',
    { rollingCountTimeout: 100, rollingCountBuckets: 1, resetTimeout: 10, errorThresholdPercentage: 40 },
    ['call 0 ok', 'call 50 fail 150', 'call 200 ok', 'call 201 fail', 'call 250 ok']],
  ['... and during half-open the failure reopens as any failure does',
    { rollingCountTimeout: 1000, rollingCountBuckets: 10, resetTimeout: 100, timeout: 300 },
    ['call 0 fail', 'call 100 timeout', 'call 450 ok', 'call 500 ok']],
  ['calls in flight: a failure that arrives after the breaker opened still counts (fires in any state)',
    { errorThresholdPercentage: 10, resetTimeout: 1000, timeout: false },
    ['admit 0 1', 'admit 1 2', 'admit 2 3', 'result 5 1 fail', 'result 6 2 fail', 'call 999 ok',
      'call 1000 ok', 'result 1001 3 ok', 'call 1002 ok']],
  ['a success from a call admitted while closed closes a half-open breaker',
    { errorThresholdPercentage: 10, resetTimeout: 500, timeout: false },
    ['admit 0 1', 'call 1 fail', 'call 2 ok', 'result 600 1 ok', 'call 601 ok']],
  ['a failure from a call admitted while closed reopens a half-open breaker',
    { errorThresholdPercentage: 10, resetTimeout: 500, timeout: false },
    ['admit 0 1', 'call 1 fail', 'result 600 1 fail', 'call 601 ok', 'call 1100 ok']],
  ['half-open: the trial in flight, the next call rejected; the trial\'s success closes',
    { resetTimeout: 1000, timeout: false },
    ['call 0 fail', 'admit 1000 1', 'call 1001 ok', 'admit 1002 2', 'result 1050 1 ok', 'call 1051 ok',
      'result 1052 2 fail']],
  ['cancel: the caller aborts the action\'s signal, the action rejects: a failure',
    { errorThresholdPercentage: 50, resetTimeout: 1000, timeout: false },
    ['admit 0 1', 'call 1 ok', 'result 2 1 cancel', 'admit 3 2', 'result 4 2 cancel', 'call 5 ok',
      'result 6 2 cancel']],
  ['cancel of the half-open trial opens again; a cancel while open still counts in the window',
    { errorThresholdPercentage: 40, resetTimeout: 100, timeout: false },
    ['admit 0 1', 'call 1 fail', 'result 50 1 cancel', 'admit 101 2', 'call 102 ok', 'result 150 2 cancel',
      'call 249 ok', 'call 250 ok', 'call 260 ok', 'call 270 fail']],
  ['a result settled by the caller exactly at a rotation comes after it (it is no timer)',
    { errorThresholdPercentage: 100, resetTimeout: 100, rollingCountTimeout: 150, rollingCountBuckets: 3, timeout: false },
    ['admit 0 1', 'admit 0 2', 'result 15 2 fail', 'result 150 1 cancel', 'call 150 ok']],
  ['... and so does a settled failure',
    { errorThresholdPercentage: 50, resetTimeout: 100, rollingCountTimeout: 100, rollingCountBuckets: 2, timeout: false },
    ['admit 0 1', 'call 0 ok', 'result 100 1 fail', 'call 101 ok']],
  ['a window of one bucket the width of a millisecond', { rollingCountTimeout: 3, rollingCountBuckets: 3, resetTimeout: 5, errorThresholdPercentage: 60 },
    ['call 0 ok', 'call 1 fail', 'call 2 ok', 'call 3 fail', 'call 4 fail', 'call 9 ok', 'call 10 ok']]
];

// One random sequence: options and a script drawn as opossum goes, aiming at its
// boundaries (the reset timer, bucket edges) as often as between them.
function randomCase (g, i) {
  const lib = {};
  const pct = g.pick([0, 10, 25, 33, 40, 50, 50, 60, 66.6, 75, 90, 100]);
  if (g.chance(0.7)) lib.errorThresholdPercentage = pct;
  lib.resetTimeout = g.pick([1, 10, 50, 100, 250, 500, 1000, 3000]);
  const buckets = g.pick([1, 2, 3, 4, 5, 10]);
  const width = g.pick([1, 2, 10, 50, 100, 250]);
  if (g.chance(0.8)) {
    lib.rollingCountBuckets = buckets;
    lib.rollingCountTimeout = buckets * width + (g.chance(0.2) ? g.below(width) : 0);
  }
  if (g.chance(0.5)) lib.volumeThreshold = g.between(0, 6);
  const timeout = g.pick([false, 0, 20, 100, 500, 2000, undefined]);
  if (timeout !== undefined) lib.timeout = timeout;
  const tmo = timeout === undefined ? 10000 : timeout;
  const bucketMs = Math.floor((lib.rollingCountTimeout ?? 10000) / (lib.rollingCountBuckets ?? 10));
  const n = g.between(4, 30);
  let calls = 0;
  let free = 0; // the first ms after the last call ended
  return {
    name: `random ${i}`,
    lib,
    next: (log, at, now) => {
      if (calls++ >= n) return null;
      let t = free;
      const r = g.below(8);
      if (r === 1) t = now + g.between(0, 3 * bucketMs);
      if (r === 2 && at.state === 'open') t = at.since + lib.resetTimeout + g.pick([-1, 0, 0, 1]);
      if (r === 3) t = (Math.floor(now / bucketMs) + g.between(1, 3)) * bucketMs + g.pick([-1, 0, 0, 1]);
      if (r === 4) t = now + g.between(0, 2 * lib.resetTimeout);
      if (r >= 5) t = now + g.between(0, 20);
      t = Math.max(t, free);
      const o = g.pick(tmo > 0 ? ['ok', 'ok', 'fail', 'fail', 'timeout'] : ['ok', 'fail']);
      let dur = 0;
      if (o !== 'timeout' && g.chance(0.3)) dur = g.between(1, tmo > 0 ? Math.min(tmo - 1, 400) : 400);
      free = t + (o === 'timeout' ? tmo : dur);
      return dur > 0 ? `call ${t} ${o} ${dur}` : `call ${t} ${o}`;
    }
  };
}

// One random sequence of overlapping calls: calls fired and left in flight ("admit"), their
// results in any order later ("result": ok, fail, or cancel: the caller aborts the signal it
// gave fire()), whole calls ("call") between them. timeout is false (an "admit" has no
// timeout of its own in the driver; the other random sequences cover timeouts).
function overlapCase (g, i) {
  const lib = { timeout: false };
  if (g.chance(0.7)) lib.errorThresholdPercentage = g.pick([0, 10, 25, 33, 40, 50, 50, 60, 66.6, 75, 90, 100]);
  lib.resetTimeout = g.pick([1, 10, 50, 100, 250, 500, 1000, 3000]);
  if (g.chance(0.8)) {
    const buckets = g.pick([1, 2, 3, 4, 5, 10]);
    const width = g.pick([1, 2, 10, 50, 100, 250]);
    lib.rollingCountBuckets = buckets;
    lib.rollingCountTimeout = buckets * width + (g.chance(0.2) ? g.below(width) : 0);
  }
  if (g.chance(0.5)) lib.volumeThreshold = g.between(0, 6);
  const bucketMs = Math.floor((lib.rollingCountTimeout ?? 10000) / (lib.rollingCountBuckets ?? 10));
  const n = g.between(6, 30);
  const idle = Array.from({ length: 16 }, (_, k) => k);
  const flying = [];
  let lines = 0;
  let free = 0; // the first ms after the last "call" ended
  return {
    name: `random overlap ${i}`,
    lib,
    next: (log, at, now) => {
      if (lines++ >= n) return null;
      let t = Math.max(free, now);
      const r = g.below(8);
      if (r === 1) t += g.between(0, 3 * bucketMs);
      if (r === 2 && at.state === 'open') t = Math.max(t, at.since + lib.resetTimeout + g.pick([-1, 0, 0, 1]));
      if (r === 3) t = Math.max(t, (Math.floor(now / bucketMs) + g.between(1, 3)) * bucketMs + g.pick([-1, 0, 0, 1]));
      if (r === 4) t += g.between(0, 2 * lib.resetTimeout);
      if (r >= 5) t += g.between(0, 20);
      const u = g.uniform();
      if (flying.length && (u < 0.4 || !idle.length)) {
        const id = flying.splice(g.below(flying.length), 1)[0];
        idle.push(id);
        return `result ${t} ${id} ${g.pick(['ok', 'ok', 'fail', 'fail', 'cancel'])}`;
      }
      if (u < 0.75) {
        const id = idle.splice(g.below(idle.length), 1)[0];
        flying.push(id);
        return `admit ${t} ${id}`;
      }
      const o = g.pick(['ok', 'fail']);
      const dur = g.chance(0.3) ? g.between(1, 400) : 0;
      free = t + dur;
      return dur ? `call ${t} ${o} ${dur}` : `call ${t} ${o}`;
    }
  };
}

const cases = [];
for (const [name, lib, script, skip] of EDGES) {
  const r = await run(lib, fixed(script));
  cases.push({ name, fusebox: { preset: 'opossum', ...lib }, lib, timers: true, ...(skip ? { skip } : {}), ...r });
}
const g = new FbRng(seed, 1);
for (let i = 1; i <= count; i++) {
  const c = randomCase(g, i);
  const r = await run(c.lib, c.next);
  cases.push({ name: c.name, random: i, fusebox: { preset: 'opossum', ...c.lib }, lib: c.lib, timers: true, ...r });
}
const g2 = new FbRng(seed, 3);
for (let i = 1; i <= overlap; i++) {
  const c = overlapCase(g2, i);
  const r = await run(c.lib, c.next);
  cases.push({ name: c.name, random: count + i, fusebox: { preset: 'opossum', ...c.lib }, lib: c.lib, timers: true, ...r });
}
const folder = join(out, `opossum-${pkg.version}`);
writeFolder(folder, cases, `# opossum ${pkg.version}

Recorded from opossum ${pkg.version} (npm), its CircuitBreaker run under
@sinonjs/fake-timers, by tests/conformance/recorders/opossum/record.mjs:

    node tests/conformance/recorders/opossum/record.mjs node_modules/opossum tests/conformance ${seed} ${count} ${overlap}

${EDGES.length} named edge cases, then ${count} random sequences drawn from seed ${seed}
(stream 1; whole calls, "call" scripts), then ${overlap} random sequences of overlapping
calls ("random overlap", seed ${seed}, stream 3, timeout false): calls fired and left in
flight ("admit"), their results later in any order ("result": ok, fail, or cancel),
whole calls between them; ${cases.length} cases in all.
Cancellation: the caller's AbortController's signal is the action's argument
(\`breaker.fire(signal)\`) and the action rejects with the signal's reason when it is
aborted (as fetch does); "result T ID cancel" aborts it at T. opossum takes no signal
of its own for a call (its abortController option is for its timeout), so an abort is a
rejection like any other: a failure. A "result" line is settled from outside opossum's
timers (after those due at its time, the bucket rotation among them); a "call" line's
result is a timer set when the call was made.
Each case's options go to \`new CircuitBreaker(action, lib)\`
as they are and to the preset under the same names ("fusebox"); the script is
tests/diff/resilience/driver.c's language, replayed with --timers (opossum
half-opens and rotates its window buckets on timers; a failure landing exactly on
a bucket boundary from a call made before the previous boundary comes before the
rotation there, its timer being the older). \`make conformance-record\` re-records.
`);
console.log(`${folder}: ${cases.length} cases`);
