// common.mjs - the SDK differential tests' shared part: run a real client against `fusebox mock`
// with a scripted fault, read the mock's attempt log, ask fusebox (the `decide` binary: the
// preset's layer fed to the core) what it decides on the same replies, and compare:
//   - the number of attempts and the status of each (so: which statuses were retried);
//   - each gap between attempts against fusebox's range for it (its jitter over 4000 draws).
// A gap may be late (the machine is busy: two busy loops on two cores), never early: earlier
// than fusebox's lowest value by more than 1 ms (Node's timers take whole milliseconds) fails.
// A gap later than fusebox's highest by more than SLACK_MS is inconclusive (a TAP skip with
// the reason) when this process's event loop lagged during the case or its timers are late
// just after it; otherwise the case runs once more, and fails when it is late again with no
// lag to explain it (a library that waits too long is found that way, a busy machine is not
// blamed for it).
// Run by tests/e2e/diff_sdk.sh with MOCK_URL and DECIDE set; prints TAP lines.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const URL = process.env.MOCK_URL;
const DECIDE = process.env.DECIDE;
const SLACK_MS = 250;
let n = 0;
let failed = 0;
let seq = 0;

export const newKey = (lib) => `diff-${lib}-${process.pid}-${++seq}`;

export function version(pkg) {
  const file = new globalThis.URL(`./node_modules/${pkg}/package.json`, import.meta.url);
  return JSON.parse(readFileSync(file)).version;
}

function tap(ok, name, directive = '') {
  n++;
  if (!ok) failed++;
  console.log(`${ok ? 'ok' : 'not ok'} ${n} - ${name}${directive ? ` # ${directive}` : ''}`);
}

async function attempts(key) {
  const log = await (await fetch(`${URL}/__fusebox/log`)).json();
  return log.entries.filter((e) => e.key === key);
}

// How late this machine's timers run now: the worst overshoot of three 20 ms timeouts.
async function timerLateness() {
  let worst = 0;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    await new Promise((r) => setTimeout(r, 20));
    worst = Math.max(worst, performance.now() - t0 - 20);
  }
  return worst;
}

// Watch this process's event loop while `fn` runs: the worst lag of a 5 ms interval.
async function withLag(fn) {
  let worst = 0;
  let last = performance.now();
  const t = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 5);
    last = now;
  }, 5);
  try {
    return { result: await fn(), lag: () => worst };
  } finally {
    clearInterval(t);
  }
}

function decide(layer, replies) {
  const out = execFileSync(DECIDE, [layer, ...replies], { encoding: 'utf8' });
  return JSON.parse(out);
}

// One case: `call(key)` makes the request (its rejection is expected when the layer gives up);
// `layer` and `replies` are the preset layer and the replies as fusebox's decide takes them.
export async function kase(name, layer, replies, call, retried = false) {
  const key = newKey(name.split(':')[0]);
  const want = decide(layer, replies);
  let error = null;
  const { lag } = await withLag(async () => {
    try {
      await call(key);
    } catch (e) {
      error = e;
    }
  });
  const got = await attempts(key);
  const statuses = got.map((e) => e.status);
  const gaps = got.slice(1).map((e, i) => e.real_ms - got[i].real_ms);
  const shown = `${got.length} attempts (${statuses.join(',')}), gaps ${gaps.map((g) => g.toFixed(1)).join(', ') || '-'} ms; fusebox: ${want.attempts} (${want.statuses.join(',')}), ${want.gaps_us.map(([lo, hi]) => `[${lo / 1000}, ${hi / 1000}]`).join(', ') || '-'} ms`;
  if (got.length !== want.attempts || statuses.join(',') !== want.statuses.join(',')) {
    tap(false, `${name}: ${shown}${error ? ` (${error.constructor?.name}: ${error.message})` : ''}`);
    return;
  }
  let late = null;
  for (let i = 0; i < gaps.length; i++) {
    const [lo, hi] = want.gaps_us[i].map((us) => us / 1000);
    if (gaps[i] < lo - 1 - 0.002 * (hi - lo)) {
      tap(false, `${name}: gap ${i + 1} is early: ${shown}`);
      return;
    }
    if (gaps[i] > hi + SLACK_MS && late === null) late = i;
  }
  if (late !== null) {
    const lateness = Math.max(lag(), await timerLateness());
    if (lateness >= SLACK_MS / 5) {
      tap(true, `${name}: ${shown}`,
        `SKIP inconclusive: gap ${late + 1} late, the event loop ${lateness.toFixed(0)} ms late (busy machine)`);
      return;
    }
    if (!retried) return kase(name, layer, replies, call, true);
    tap(false, `${name}: gap ${late + 1} is late twice with no lag to explain it (${lateness.toFixed(1)} ms): ${shown}`);
    return;
  }
  tap(true, `${name}: ${shown}`);
}

// One successful call first, so that no case pays for loading and compiling the client.
export async function warmUp(call) {
  try {
    await call(newKey('warm-up'));
  } catch (e) {
    tap(false, `warm-up call: ${e.constructor?.name}: ${e.message}`);
  }
}

export function finish() {
  process.exitCode = failed > 0 ? 1 : 0;
}
