// ratekeeper's synchronous decisions beside the JavaScript rate limiters
// people use, measured in the same run, interleaved: Guava's RateLimiter
// (tryAcquire) and an admission-style algorithm, GCRA (check, which makes
// a Decision, and tryAcquire, which does not).
//
//   (cd node && npm ci && npm run build)      # the release build of the package
//   (cd benches/node && npm ci && node bench.mjs [--rounds N] [--json])
//
// Each case makes one rate-limiting decision per operation on one limiter,
// every call admitted or every call refused:
//
//   ratekeeper        RateLimiter.tryAcquire()           (synchronous)
//   ratekeeper async  await RateLimiter.tryAcquire(1, { timeoutMs: 0 })
//   Gcra check        Gcra.check()                       (synchronous; a Decision per call)
//   Gcra tryAcquire   Gcra.tryAcquire()                  (synchronous; a boolean)
//   limiter           TokenBucket.tryRemoveTokens(1)     (synchronous; npm `limiter`)
//   rlf               await RateLimiterMemory.consume(k) (npm `rate-limiter-flexible`;
//                     it refuses by rejecting the Promise)
//   pure-JS GCRA      a ten-line GCRA on performance.now(): what plain
//                     JavaScript costs, for reference
//
// A round runs every case for about 20 ms, in a shuffled order; the table
// gives each case's median over the rounds, and the ratios the issue asks
// for: ratekeeper ÷ limiter's TokenBucket (target ≤ 1.0) and
// rate-limiter-flexible ÷ ratekeeper (target ≥ 5), for RateLimiter and
// for Gcra.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const { RateLimiter, Gcra } = require(path.join(here, '..', '..', 'node'));
const { TokenBucket } = require('limiter');
const { RateLimiterMemory } = require('rate-limiter-flexible');

const argv = process.argv.slice(2);
const ROUNDS = Number(argv[argv.indexOf('--rounds') + 1]) || (argv.includes('--rounds') ? 0 : 21);
const TARGET_NS_PER_ROUND = 20e6;

/** Every call admitted: far more permits per second than calls. */
const HUGE = 1e12;

/** GCRA in plain JavaScript (a reference point, not a peer). */
class JsGcra {
  constructor(perSecond, burst) {
    this.interval = 1e3 / perSecond;
    this.tolerance = this.interval * burst;
    this.tat = 0;
  }
  tryAcquire() {
    const now = performance.now();
    const tat = Math.max(this.tat, now);
    if (tat - now > this.tolerance) return false;
    this.tat = tat + this.interval;
    return true;
  }
}

let sink = 0;

/** A synchronous case: `op` returns a boolean decision. */
function sync(name, expected, op) {
  return {
    name,
    expected,
    run(n) {
      let admitted = 0;
      const start = process.hrtime.bigint();
      for (let i = 0; i < n; i++) if (op()) admitted++;
      const ns = Number(process.hrtime.bigint() - start);
      sink += admitted;
      return { ns, admitted };
    },
  };
}

/** A Promise case: `op` returns a Promise of a decision (a rejection refuses). */
function promised(name, expected, op) {
  return {
    name,
    expected,
    async run(n) {
      let admitted = 0;
      const start = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        try {
          if (await op()) admitted++;
        } catch {
          // rate-limiter-flexible refuses by rejecting
        }
      }
      const ns = Number(process.hrtime.bigint() - start);
      sink += admitted;
      return { ns, admitted };
    },
  };
}

function refusedRatekeeper() {
  const limiter = RateLimiter.create(1e-9);
  limiter.tryAcquire(); // the one granted when free; nothing more for 31 years
  return limiter;
}

function refusedGcraRk() {
  // One per 31 years, one at a time: the first is admitted, then none.
  const gcra = new Gcra({ maxBurst: 0, countPerPeriod: 1, periodMs: 1e12 });
  gcra.tryAcquire();
  return gcra;
}

function refusedBucket() {
  return new TokenBucket({ bucketSize: 1, tokensPerInterval: 1, interval: 'day' });
}

function refusedRlf() {
  const rlf = new RateLimiterMemory({ points: 1, duration: 86_400 });
  rlf.consume('user').catch(() => {});
  return rlf;
}

function refusedGcra() {
  const gcra = new JsGcra(1e-9, 0);
  gcra.tryAcquire();
  return gcra;
}

const cases = [];
{
  const rk = RateLimiter.create(HUGE);
  const rkAsync = RateLimiter.create(HUGE);
  const bucket = new TokenBucket({ bucketSize: HUGE, tokensPerInterval: HUGE, interval: 'second' });
  const rlf = new RateLimiterMemory({ points: HUGE, duration: 86_400 });
  const gcra = new JsGcra(HUGE, 1);
  // 10^9 a second, 10^6 at once: every call admitted. (Parameters a real
  // limiter has: its times in ticks of 1/count µs fit in 64 bits, as in
  // the Rust benchmark; 10^12 a millisecond would take 128-bit divisions.)
  const rkGcraCheck = new Gcra({ maxBurst: 1e6, countPerPeriod: 1e9, periodMs: 1000 });
  const rkGcraTry = new Gcra({ maxBurst: 1e6, countPerPeriod: 1e9, periodMs: 1000 });
  cases.push(
    sync('admitted/ratekeeper', true, () => rk.tryAcquire()),
    sync('admitted/Gcra check', true, () => rkGcraCheck.check().allowed),
    sync('admitted/Gcra tryAcquire', true, () => rkGcraTry.tryAcquire()),
    promised('admitted/ratekeeper async', true, () => rkAsync.tryAcquire(1, { timeoutMs: 0 })),
    sync('admitted/limiter', true, () => bucket.tryRemoveTokens(1)),
    promised('admitted/rlf', true, () => rlf.consume('user')),
    sync('admitted/pure-JS GCRA', true, () => gcra.tryAcquire()),
  );
}
{
  const rk = refusedRatekeeper();
  const rkAsync = refusedRatekeeper();
  const bucket = refusedBucket();
  const rlf = refusedRlf();
  const gcra = refusedGcra();
  const rkGcraCheck = refusedGcraRk();
  const rkGcraTry = refusedGcraRk();
  cases.push(
    sync('refused/ratekeeper', false, () => rk.tryAcquire()),
    sync('refused/Gcra check', false, () => rkGcraCheck.check().allowed),
    sync('refused/Gcra tryAcquire', false, () => rkGcraTry.tryAcquire()),
    promised('refused/ratekeeper async', false, () => rkAsync.tryAcquire(1, { timeoutMs: 0 })),
    sync('refused/limiter', false, () => bucket.tryRemoveTokens(1)),
    promised('refused/rlf', false, () => rlf.consume('user')),
    sync('refused/pure-JS GCRA', false, () => gcra.tryAcquire()),
  );
}
{
  // 100 limiters through one call site, round robin: each ratekeeper limiter
  // has its own bound native function, so the site sees 100 targets.
  const K = 100;
  const rks = Array.from({ length: K }, () => RateLimiter.create(HUGE));
  const buckets = Array.from(
    { length: K },
    () => new TokenBucket({ bucketSize: HUGE, tokensPerInterval: HUGE, interval: 'second' }),
  );
  let i = 0;
  let j = 0;
  cases.push(
    sync('100 limiters/ratekeeper', true, () => rks[(i = (i + 1) % K)].tryAcquire()),
    sync('100 limiters/limiter', true, () => buckets[(j = (j + 1) % K)].tryRemoveTokens(1)),
  );
}

function shuffle(items) {
  for (let i = items.length - 1; i > 0; i--) {
    const k = Math.floor(Math.random() * (i + 1));
    [items[i], items[k]] = [items[k], items[i]];
  }
  return items;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

// Calibrate: operations per round for about TARGET_NS_PER_ROUND, and check
// that every case decides as it claims (all admitted, or all refused).
const opsPerRound = new Map();
for (const c of cases) {
  let n = 1_000;
  for (;;) {
    const { ns, admitted } = await c.run(n);
    const all = c.expected ? admitted === n : admitted === 0;
    if (!all) throw new Error(`${c.name}: ${admitted} of ${n} admitted, expected ${c.expected ? 'all' : 'none'}`);
    if (ns > TARGET_NS_PER_ROUND / 4 || n >= 1e8) {
      opsPerRound.set(c, Math.max(1_000, Math.round((n * TARGET_NS_PER_ROUND) / ns)));
      break;
    }
    n *= 4;
  }
}

const samples = new Map(cases.map((c) => [c, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const c of shuffle([...cases])) {
    const n = opsPerRound.get(c);
    const { ns } = await c.run(n);
    samples.get(c).push(ns / n);
  }
}

const ns = Object.fromEntries(cases.map((c) => [c.name, median(samples.get(c))]));
const ratio = (a, b) => ns[a] / ns[b];
const results = {
  node: process.version,
  rounds: ROUNDS,
  ns_per_op: ns,
  ratios: {
    'admitted: ratekeeper / limiter': ratio('admitted/ratekeeper', 'admitted/limiter'),
    'refused: ratekeeper / limiter': ratio('refused/ratekeeper', 'refused/limiter'),
    'admitted: rlf / ratekeeper': ratio('admitted/rlf', 'admitted/ratekeeper'),
    'refused: rlf / ratekeeper': ratio('refused/rlf', 'refused/ratekeeper'),
    'admitted: rlf / ratekeeper async': ratio('admitted/rlf', 'admitted/ratekeeper async'),
    'refused: rlf / ratekeeper async': ratio('refused/rlf', 'refused/ratekeeper async'),
    '100 limiters: ratekeeper / limiter': ratio('100 limiters/ratekeeper', '100 limiters/limiter'),
    'admitted: Gcra check / limiter': ratio('admitted/Gcra check', 'admitted/limiter'),
    'refused: Gcra check / limiter': ratio('refused/Gcra check', 'refused/limiter'),
    'admitted: rlf / Gcra check': ratio('admitted/rlf', 'admitted/Gcra check'),
    'refused: rlf / Gcra check': ratio('refused/rlf', 'refused/Gcra check'),
    'admitted: Gcra tryAcquire / limiter': ratio('admitted/Gcra tryAcquire', 'admitted/limiter'),
    'refused: Gcra tryAcquire / limiter': ratio('refused/Gcra tryAcquire', 'refused/limiter'),
    'admitted: rlf / Gcra tryAcquire': ratio('admitted/rlf', 'admitted/Gcra tryAcquire'),
    'refused: rlf / Gcra tryAcquire': ratio('refused/rlf', 'refused/Gcra tryAcquire'),
    'admitted: Decision cost, Gcra check - tryAcquire (ns)': ns['admitted/Gcra check'] - ns['admitted/Gcra tryAcquire'],
    'refused: Decision cost, Gcra check - tryAcquire (ns)': ns['refused/Gcra check'] - ns['refused/Gcra tryAcquire'],
  },
};

if (argv.includes('--json')) {
  console.log(JSON.stringify(results, null, 2));
} else {
  const f = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  console.log(`Node ${process.version}, median of ${ROUNDS} interleaved rounds, ns per decision\n`);
  console.log('| workload | RateLimiter tryAcquire() | RateLimiter await tryAcquire(1, {timeoutMs: 0}) | Gcra check() | Gcra tryAcquire() | limiter TokenBucket | rate-limiter-flexible consume() | pure-JS GCRA |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const w of ['admitted', 'refused']) {
    console.log(
      `| every call ${w} | ${f(ns[`${w}/ratekeeper`])} | ${f(ns[`${w}/ratekeeper async`])} | ${f(ns[`${w}/Gcra check`])} | ${f(ns[`${w}/Gcra tryAcquire`])} | ${f(ns[`${w}/limiter`])} | ${f(ns[`${w}/rlf`])} | ${f(ns[`${w}/pure-JS GCRA`])} |`,
    );
  }
  console.log(`| 100 limiters, round robin, admitted | ${f(ns['100 limiters/ratekeeper'])} | | | | ${f(ns['100 limiters/limiter'])} | | |`);
  console.log('\n| ratio | value | target |');
  console.log('|---|---|---|');
  const targets = {
    'admitted: ratekeeper / limiter': '≤ 1.0',
    'refused: ratekeeper / limiter': '≤ 1.0',
    'admitted: rlf / ratekeeper': '≥ 5',
    'refused: rlf / ratekeeper': '≥ 5',
    'admitted: Gcra check / limiter': '≤ 1.0',
    'refused: Gcra check / limiter': '≤ 1.0',
    'admitted: rlf / Gcra check': '≥ 5',
    'refused: rlf / Gcra check': '≥ 5',
  };
  for (const [k, v] of Object.entries(results.ratios)) console.log(`| ${k} | ${v.toFixed(k.endsWith('(ns)') ? 1 : 2)} | ${targets[k] ?? ''} |`);
}
if (sink < 0) console.log(sink); // keeps the decisions observable
