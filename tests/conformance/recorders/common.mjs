// common.mjs - what the npm recorders (opossum, cockatiel) share: fusebox's
// random numbers, a fake clock resolved beside the library, the case writer.
//
// FbRng is core/rng.c's PCG32 (fb_rng_seed, fb_rng_uniform) in JavaScript. The
// replay seeds fusebox's generator with (42, 7) for each case, as
// tests/diff/resilience/driver.c does; a recorder that hands the library the
// same stream as Math.random records the draws the library consumed ("u") and
// the delays it made from them, so jittered delays are compared exactly. The
// same generator, seeded from the command line, draws the random sequences.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const M64 = (1n << 64n) - 1n;
const MULT = 6364136223846793005n;

export class FbRng {
  constructor (seed, stream) {
    this.state = 0n;
    this.inc = ((BigInt(stream) << 1n) | 1n) & M64;
    this.u32();
    this.state = (this.state + BigInt(seed)) & M64;
    this.u32();
  }

  u32 () {
    const old = this.state;
    this.state = (old * MULT + this.inc) & M64;
    const x = Number((((old >> 18n) ^ old) >> 27n) & 0xffffffffn);
    const rot = Number(old >> 59n);
    return ((x >>> rot) | (x << ((32 - rot) & 31))) >>> 0;
  }

  uniform () {
    const hi = BigInt(this.u32());
    const lo = BigInt(this.u32());
    return Number(((hi << 32n) | lo) >> 11n) * 2 ** -53;
  }

  // Helpers for drawing the random sequences.
  below (n) { return Math.floor(this.uniform() * n); }
  between (a, b) { return a + this.below(b - a + 1); }
  pick (xs) { return xs[this.below(xs.length)]; }
  chance (p) { return this.uniform() < p; }
}

// The stream fusebox's driver draws from in each case.
export const fuseboxDraws = () => new FbRng(42, 7);

// The library's package folder and what sits beside it in node_modules.
export function libraryAt (dir, name) {
  dir = resolve(dir);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  if (pkg.name !== name) throw new Error(`${dir} holds ${pkg.name}, not ${name}`);
  const require = createRequire(join(dir, 'package.json'));
  let FakeTimers;
  try {
    FakeTimers = require('@sinonjs/fake-timers');
  } catch (e) {
    throw new Error(`@sinonjs/fake-timers is not installed beside ${dir} (npm install @sinonjs/fake-timers@15.5.0)`);
  }
  return { pkg, require, FakeTimers };
}

export function installClock (FakeTimers) {
  return FakeTimers.install({
    now: 0, toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date']
  });
}

// Parse "call T OUTCOME [DUR]", "admit T ID", "result T ID OUTCOME", "request T OUTCOME K",
// "retry OUTCOME K".
export const parse = line => {
  const [what, a, b, c] = line.trim().split(/\s+/);
  if (what === 'admit') return { what, t: Number(a), id: Number(b) };
  if (what === 'result') return { what, t: Number(a), id: Number(b), outcome: c };
  if (what === 'call') return { what, t: Number(a), outcome: b, dur: Number(c || 0) };
  if (what === 'request') return { what, t: Number(a), outcome: b, k: Number(c) };
  return { what, outcome: a, k: Number(b) };
};

// Write OUT_DIR/cases.jsonl and OUT_DIR/SOURCE.md.
export function writeFolder (out, cases, source) {
  mkdirSync(out, { recursive: true });
  const order = ['name', 'random', 'skip', 'timers', 'fusebox', 'lib', 'script', 'expect'];
  const lines = cases.map(c => {
    const o = {};
    for (const k of order) if (c[k] !== undefined) o[k] = c[k];
    return JSON.stringify(o);
  });
  writeFileSync(join(out, 'cases.jsonl'), lines.join('\n') + '\n');
  writeFileSync(join(out, 'SOURCE.md'), source);
}

// The command-line arguments of a recorder: LIBRARY_DIR OUT_PARENT [SEED [COUNT]].
export function args (usage) {
  const [dir, out, seed = '20', count = '2000'] = process.argv.slice(2);
  if (!dir || !out) {
    console.error(usage);
    process.exit(2);
  }
  return { dir, out, seed: Number(seed), count: Number(count) };
}

// A promise settled from outside: a call in flight until its "result" line.
export function deferred () {
  const d = {};
  d.promise = new Promise((resolve, reject) => { d.resolve = resolve; d.reject = reject; });
  return d;
}
