// run.mjs - the real cockatiel and opossum against fusebox's presets, case by case.
//
//   node run.mjs LIBRARY NODE_MODULES DRIVER CASES_JSON
//
// For each case of LIBRARY in CASES_JSON, the script runs through fusebox's
// driver (the preset's layer fed to core/, tests/diff/resilience/driver.c) and
// through the library itself under @sinonjs/fake-timers, and the two decision
// logs must agree: every call admitted or rejected, every state transition
// with its time, every retry with its delay (the library is handed the random
// numbers fusebox drew, so jittered delays are compared exactly). Prints
// "ok NAME" or "not ok NAME: why" per case.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [library, modules, driver, casesFile] = process.argv.slice(2);
const require = createRequire(modules + '/');
const FakeTimers = require('@sinonjs/fake-timers');
const cases = JSON.parse(readFileSync(casesFile, 'utf8'))[library];

function fusebox (c) {
  const args = [JSON.stringify(c.fusebox).slice(1, -1)].concat(c.timers ? ['--timers'] : []);
  const out = execFileSync(driver, args, { input: c.script.join('\n') + '\n' });
  return out.toString().trim().split('\n').filter(Boolean).map(l => JSON.parse(l));
}

const parse = line => {
  const [what, a, b, c] = line.trim().split(/\s+/);
  if (what === 'call') return { what, t: Number(a), outcome: b, dur: Number(c || 0) };
  if (what === 'request') return { what, t: Number(a), outcome: b, k: Number(c) };
  return { what, outcome: a, k: Number(b) };
};

// A call that ends with `outcome` after `dur` ms (a timeout never ends by itself).
const action = (outcome, dur, clock) => () => new Promise((resolve, reject) => {
  if (outcome === 'timeout') return;
  const end = () => (outcome === 'ok' ? resolve('ok') : reject(new Error('503')));
  if (dur > 0) clock.setTimeout(end, dur); else end();
});

// circuitBreaker(handleAll, {halfOpenAfter, breaker: new ConsecutiveBreaker(n)}), logging transitions.
function cockatielCircuit (ck, c, log) {
  const names = { [ck.CircuitState.Closed]: 'closed', [ck.CircuitState.Open]: 'open',
    [ck.CircuitState.HalfOpen]: 'half_open' };
  const cb = ck.circuitBreaker(ck.handleAll, {
    halfOpenAfter: c.lib.halfOpenAfter,
    breaker: new ck.ConsecutiveBreaker(c.lib.consecutive)
  });
  let state = 'closed';
  cb.onStateChange(s => { log.push({ t: Date.now(), from: state, to: names[s] }); state = names[s]; });
  return cb;
}

async function cockatielBreaker (c, clock, log) {
  const ck = await import(pathToFileURL(modules + '/cockatiel/dist/index.js'));
  const cb = cockatielCircuit(ck, c, log);
  for (const line of c.script.map(parse)) {
    await clock.tickAsync(line.t - Date.now());
    const t = Date.now();
    const fn = action(line.outcome, line.dur, clock);
    const p = cb.execute(() => { log.push({ t, call: 'admitted' }); return fn(); })
      .catch(e => { if (e instanceof ck.BrokenCircuitError) log.push({ t, call: 'rejected' }); });
    await clock.tickAsync(line.dur);
    await p;
  }
}

function backoffOf (ck, o) {
  if (o.backoff === 'ExponentialBackoff') {
    const opts = { ...o.options };
    if (opts.generator) opts.generator = ck[opts.generator];
    return new ck.ExponentialBackoff(opts);
  }
  return new ck.ConstantBackoff(o.interval ?? 0);
}

// The library's retry handed fusebox's draws, in order.
async function cockatielRetry (c, clock, log, draws) {
  const ck = await import(pathToFileURL(modules + '/cockatiel/dist/index.js'));
  for (const line of c.script.map(parse)) {
    const mine = draws.shift();
    Math.random = () => {
      if (mine.length === 0) throw new Error('the library drew more random numbers than fusebox');
      return mine.shift();
    };
    const policy = ck.retry(ck.handleAll, { maxAttempts: c.lib.maxAttempts, backoff: backoffOf(ck, c.lib) });
    let attempts = 0;
    policy.onRetry(r => log.push({ retry: r.attempt, delay_us: Math.round(r.delay * 1000) }));
    let end = 'success';
    const p = policy.execute(() => {
      attempts++;
      if (line.k < 0 || attempts <= line.k) throw new Error('503');
      return 'ok';
    }).catch(() => { end = 'attempts'; });
    await clock.runAllAsync();
    await p;
    log.push({ attempts, end });
  }
}

// wrap(retry, circuitBreaker): every try asks the breaker; handleAll retries its rejections too.
async function cockatielWrap (c, clock, log) {
  const ck = await import(pathToFileURL(modules + '/cockatiel/dist/index.js'));
  const cb = cockatielCircuit(ck, c, log);
  const retry = ck.retry(ck.handleAll, { maxAttempts: c.lib.maxAttempts, backoff: backoffOf(ck, c.lib) });
  const rejected = e => e instanceof ck.BrokenCircuitError;
  retry.onRetry(r => { if (rejected(r.error)) log.push({ t: Date.now(), call: 'rejected' }); });
  const policy = ck.wrap(retry, cb);
  for (const line of c.script.map(parse)) {
    await clock.tickAsync(line.t - Date.now());
    let sent = 0;
    let end = 'success';
    const p = policy.execute(() => {
      log.push({ t: Date.now(), call: 'admitted' });
      sent++;
      if (line.k < 0 || sent <= line.k) throw new Error('503');
      return 'ok';
    }).catch(e => {
      if (rejected(e)) log.push({ t: Date.now(), call: 'rejected' });
      end = rejected(e) && sent === 0 ? 'breaker_open' : 'exhausted';
    });
    await clock.runAllAsync();
    await p;
    log.push({ t: Date.now(), end });
  }
}

async function opossumBreaker (c, clock, log) {
  const CircuitBreaker = require('opossum');
  let call = () => Promise.resolve('ok');
  const breaker = new CircuitBreaker(() => call(), c.lib);
  let state = 'closed';
  const to = s => () => { log.push({ t: Date.now(), from: state, to: s }); state = s; };
  breaker.on('open', to('open'));
  breaker.on('halfOpen', to('half_open'));
  breaker.on('close', to('closed'));
  for (const line of c.script.map(parse)) {
    await clock.tickAsync(line.t - Date.now());
    const t = Date.now();
    let invoked = false;
    const fn = action(line.outcome, line.dur, clock);
    call = () => { invoked = true; log.push({ t, call: 'admitted' }); return fn(); };
    const p = breaker.fire().catch(() => {});
    if (!invoked) log.push({ t, call: 'rejected' });
    await clock.tickAsync(line.outcome === 'timeout' ? breaker.options.timeout : line.dur);
    await p;
  }
  breaker.shutdown();
}

async function library_log (c, mine) {
  const clock = FakeTimers.install({
    now: 0, toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date']
  });
  const log = [];
  const random = Math.random;
  try {
    const draws = mine.filter(e => 'retry' in e || 'attempts' in e)
      .reduce((acc, e) => { if ('retry' in e) acc.cur.push(...e.u); else { acc.all.push(acc.cur); acc.cur = []; } return acc; },
        { all: [], cur: [] }).all;
    if (library === 'cockatiel' && c.kind === 'retry') await cockatielRetry(c, clock, log, draws);
    else if (library === 'cockatiel' && c.kind === 'wrap') await cockatielWrap(c, clock, log);
    else if (library === 'cockatiel') await cockatielBreaker(c, clock, log);
    else await opossumBreaker(c, clock, log);
  } finally {
    Math.random = random;
    clock.uninstall();
  }
  return log;
}

// The two logs agree: the same entries in order; delays within 1 us (fusebox truncates to us).
function differ (mine, theirs) {
  const strip = e => { const { u, ...rest } = e; return rest; };
  const n = Math.max(mine.length, theirs.length);
  for (let i = 0; i < n; i++) {
    const a = mine[i] && strip(mine[i]);
    const b = theirs[i];
    const same = a && b && Object.keys({ ...a, ...b }).every(k =>
      k === 'delay_us' ? Math.abs(a[k] - b[k]) <= 1 : a[k] === b[k]);
    if (!same) return `entry ${i}: fusebox ${JSON.stringify(a)}, ${library} ${JSON.stringify(b)}`;
  }
  return null;
}

for (const c of cases) {
  let why;
  try {
    const mine = fusebox(c);
    const theirs = await library_log(c, mine);
    why = differ(mine, theirs);
  } catch (e) {
    why = String(e && e.stack || e);
  }
  console.log(why ? `not ok ${c.name}: ${why.replace(/\n/g, ' | ')}` : `ok ${c.name}`);
}
