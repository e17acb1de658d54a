// ratekeeper's exact-mode decisions through Redis beside
// rate-limiter-flexible's RateLimiterRedis (on ioredis), in the same run,
// against the same Redis, interleaved.
//
//   benches/redis/node/run [--json FILE] [--quick]      (installs, builds, starts a Redis if need be)
//   node bench.mjs [--json FILE] [--quick]              (RATEKEEPER_REDIS_URL set, node/ built)
//
// Each case keeps N decisions in flight — N workers, each awaiting one
// decision after another — for a fixed time, and counts decisions per
// second:
//
//   ratekeeper   await RedisLimiter.check(key)    GCRA, one EVALSHA per decision
//   rlf          await RateLimiterRedis.consume(key)  its INCR + PTTL Lua script
//                (ioredis, default options; it refuses by rejecting)
//   ioredis PING await redis.ping()               the client's own ceiling, for scale
//
// Workloads (keys round robin over a set of keys, fresh for each run):
//
//   admitted, 32 in flight           every decision admitted (the target: ≥ 1.5× rlf)
//   refused in Redis, 32 in flight   every decision refused by the server
//                                    (ratekeeper with rememberRefusals: false)
//   refused, remembered, 32 in flight  every decision refused, the client
//                                    remembering the refusal (ratekeeper's
//                                    default; rlf's inMemoryBlockOnConsumed)
//   admitted, 1 in flight            one decision at a time (latency)
//
// A round runs every case of a workload once for a fixed time, in a shuffled
// order; the result is each case's median over the rounds. The JSON
// (--json FILE) is the ratekeeper-bench/1 format benches/report.py reads:
// one table, ns of wall time per decision (1e9 ÷ decisions per second),
// each row also carrying its decisions per second; ratios to ratekeeper's.
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const { RedisStore, RedisLimiter } = require(path.join(here, '..', '..', '..', 'node'));
const { Redis } = require('ioredis');
const { RateLimiterRedis } = require('rate-limiter-flexible');
const versions = {
  ioredis: require('ioredis/package.json').version,
  rlf: require('rate-limiter-flexible/package.json').version,
};

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const jsonAt = argv.indexOf('--json');
const jsonFile = jsonAt >= 0 ? argv[jsonAt + 1] : undefined;
if (jsonAt >= 0 && !jsonFile) throw new Error('--json needs a file name');
const url = process.env.RATEKEEPER_REDIS_URL;
if (!url) throw new Error('RATEKEEPER_REDIS_URL is not set (benches/redis/node/run starts a Redis)');

const ROUNDS = quick ? 3 : 7;
const CASE_MS = quick ? 300 : 1_000;
const WARMUP_MS = quick ? 200 : 500;
const run = `bench${process.pid}${Date.now()}`;

// A timeout far above any decision's time here: on a loaded machine the
// default 100 ms could fail a decision, which no peer would (ioredis has no
// command timeout by default).
const store = await RedisStore.connect(url, { timeoutMs: 5_000 });
const redis = new Redis(url, { lazyConnect: false });
await redis.ping();

/** Keys, fresh for this run. */
const keysOf = (label, n) => Array.from({ length: n }, (_, i) => `${label}:${i}`);

// Every call admitted: far more per second than calls (GCRA's products
// stay far below 2^53).
const ADMIT = { algorithm: 'gcra', maxBurst: 1_000_000, countPerPeriod: 1_000_000, periodMs: 1_000 };
// One per hour: after the first, every call refused (for an hour).
const REFUSE = { algorithm: 'gcra', maxBurst: 0, countPerPeriod: 1, periodMs: 3_600_000 };

const rkAdmit = new RedisLimiter(store, `${run}:admit`, ADMIT);
const rkRefuseServer = new RedisLimiter(store, `${run}:refuse-server`, REFUSE, { rememberRefusals: false });
const rkRefuseLocal = new RedisLimiter(store, `${run}:refuse-local`, REFUSE);
const rlfAdmit = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${run}:rlf-admit`, points: 1e12, duration: 3_600 });
const rlfRefuseServer = new RateLimiterRedis({ storeClient: redis, keyPrefix: `${run}:rlf-refuse`, points: 1, duration: 3_600 });
const rlfRefuseLocal = new RateLimiterRedis({
  storeClient: redis,
  keyPrefix: `${run}:rlf-block`,
  points: 1,
  duration: 3_600,
  inMemoryBlockOnConsumed: 2,
  inMemoryBlockDuration: 3_600,
});

/**
 * A case: `op(key)` makes one decision; `allowed(result)` reads it (a
 * rejection is a refusal).
 */
function contender(name, keys, op, allowed = () => true) {
  let next = 0;
  return {
    name,
    async decide() {
      const key = keys[next];
      next = next + 1 === keys.length ? 0 : next + 1;
      try {
        return allowed(await op(key));
      } catch (error) {
        if (error instanceof Error) throw error; // a real failure, not a refusal
        return false;
      }
    },
  };
}

const admittedKeys = keysOf('a', 1_000);
const refusedKeys = keysOf('r', 100);
const rk = (limiter) => (key) => limiter.check(key);
const rkAllowed = (d) => d.allowed;
const rlf = (limiter) => (key) => limiter.consume(key);

const workloads = [
  {
    name: 'admitted, 32 in flight',
    inFlight: 32,
    expect: true,
    cases: [
      contender('ratekeeper', admittedKeys, rk(rkAdmit), rkAllowed),
      contender('rlf', admittedKeys, rlf(rlfAdmit)),
      contender('ioredis PING', admittedKeys, () => redis.ping()),
    ],
  },
  {
    name: 'refused in Redis, 32 in flight',
    inFlight: 32,
    expect: false,
    cases: [
      contender('ratekeeper', refusedKeys, rk(rkRefuseServer), rkAllowed),
      contender('rlf', refusedKeys, rlf(rlfRefuseServer)),
    ],
  },
  {
    name: 'refused, remembered in the client, 32 in flight',
    inFlight: 32,
    expect: false,
    cases: [
      contender('ratekeeper', refusedKeys, rk(rkRefuseLocal), rkAllowed),
      contender('rlf', refusedKeys, rlf(rlfRefuseLocal)),
    ],
  },
  {
    name: 'admitted, 1 in flight',
    inFlight: 1,
    expect: true,
    cases: [
      contender('ratekeeper', admittedKeys, rk(rkAdmit), rkAllowed),
      contender('rlf', admittedKeys, rlf(rlfAdmit)),
      contender('ioredis PING', admittedKeys, () => redis.ping()),
    ],
  },
];

/** The Redis server's CPU time so far, in µs (INFO cpu). */
async function serverCpu() {
  const info = await redis.info('cpu');
  const seconds = (name) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)[1]);
  return (seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6;
}

/**
 * Keeps `inFlight` decisions of `c` going for `ms`: decisions, admitted,
 * seconds, and the CPU time per decision (µs) of this process (every
 * thread: ratekeeper's include its Redis thread, idle in exact mode) and of the Redis server.
 * CPU per decision says what a decision costs whatever else runs on the
 * machine; decisions per second also depend on it.
 */
async function drive(c, inFlight, ms) {
  let decisions = 0;
  let admitted = 0;
  const server = await serverCpu();
  const cpu = process.cpuUsage();
  const start = performance.now();
  const deadline = start + ms;
  const worker = async () => {
    while (performance.now() < deadline) {
      if (await c.decide()) admitted++;
      decisions++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const seconds = (performance.now() - start) / 1e3;
  const used = process.cpuUsage(cpu);
  const clientCpu = (used.user + used.system) / decisions;
  const serverCpuPer = ((await serverCpu()) - server) / decisions;
  return { decisions, admitted, seconds, clientCpu, serverCpu: serverCpuPer };
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

// Exhaust the refusing limiters' keys (the first call of each is admitted,
// rlf's block needs a second), then warm every case up and check that it
// decides as the workload says.
for (const key of refusedKeys) {
  await rkRefuseServer.check(key);
  await rkRefuseLocal.check(key);
  for (const l of [rlfRefuseServer, rlfRefuseLocal, rlfRefuseLocal]) await l.consume(key).catch(() => {});
}
for (const w of workloads) {
  for (const c of w.cases) {
    const { decisions, admitted } = await drive(c, w.inFlight, WARMUP_MS);
    const all = w.expect || c.name === 'ioredis PING' ? admitted === decisions : admitted === 0;
    if (!all || decisions === 0) {
      throw new Error(`${w.name} / ${c.name}: ${admitted} of ${decisions} admitted, expected ${w.expect ? 'all' : 'none'}`);
    }
  }
}

const perSecond = new Map();
const clientCpu = new Map();
const serverCpuOf = new Map();
for (const w of workloads) for (const c of w.cases) [perSecond, clientCpu, serverCpuOf].forEach((m) => m.set(c, []));
for (let round = 0; round < ROUNDS; round++) {
  for (const w of workloads) {
    for (const c of shuffle([...w.cases])) {
      const r = await drive(c, w.inFlight, CASE_MS);
      perSecond.get(c).push(r.decisions / r.seconds);
      clientCpu.get(c).push(r.clientCpu);
      serverCpuOf.get(c).push(r.serverCpu);
    }
  }
}

const names = {
  ratekeeper: 'ratekeeper RedisLimiter.check() (GCRA)',
  rlf: `rate-limiter-flexible ${versions.rlf} RateLimiterRedis.consume() (ioredis ${versions.ioredis})`,
  'ioredis PING': `ioredis ${versions.ioredis} PING (the client's ceiling, for scale)`,
};
const rows = [];
const cpuRows = [];
const table = [];
for (const w of workloads) {
  const oursCase = w.cases.find((c) => c.name === 'ratekeeper');
  const ours = median(perSecond.get(oursCase));
  const oursCpu = median(clientCpu.get(oursCase)) + median(serverCpuOf.get(oursCase));
  for (const c of w.cases) {
    const rate = median(perSecond.get(c));
    const client = median(clientCpu.get(c));
    const server = median(serverCpuOf.get(c));
    rows.push({
      workload: w.name,
      contender: names[c.name],
      value: 1e9 / rate,
      ratio: ours / rate,
      decisions_per_second: rate,
    });
    cpuRows.push({
      workload: w.name,
      contender: names[c.name],
      value: (client + server) * 1e3,
      ratio: (client + server) / oursCpu,
      client_cpu_ns: client * 1e3,
      server_cpu_ns: server * 1e3,
    });
    table.push([w.name, c.name, rate, rate / ours, client, server]);
  }
}

const summary = {
  format: 'ratekeeper-bench/1',
  suite: 'redis-node',
  title: 'Redis from Node.js: exact-mode decisions beside rate-limiter-flexible',
  command: 'benches/redis/node/run',
  notes:
    `Node ${process.version}; one local Redis; N workers each awaiting one decision after another for ` +
    `${CASE_MS} ms per case, ${ROUNDS} interleaved rounds in a shuffled order, medians. Value: wall time ` +
    'per decision (1e9 ÷ decisions per second, also given); ratio: time ÷ ratekeeper\'s (above 1, ' +
    'ratekeeper decides more per second). Target: ≥ 1.5× rate-limiter-flexible at 32 in flight. ' +
    'CPU per decision (process.cpuUsage() of this process, every thread; INFO cpu of the server) is the ' +
    'cost whatever else the machine runs. Exact-mode checks go out on the store\'s own socket on the ' +
    'JavaScript thread, a batch as up to four pipelined script runs (crates/ratekeeper-redis/src/pipe.rs).',
  tables: [
    { title: 'ns of wall time per decision', unit: 'ns', reference: 'ratekeeper', rows },
    {
      title: 'ns of CPU per decision: the client process (every thread) plus the Redis server',
      unit: 'ns',
      reference: 'ratekeeper',
      rows: cpuRows,
    },
  ],
};
if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify(summary, null, 2)}\n`);

console.log(`Node ${process.version}, ${ROUNDS} rounds of ${CASE_MS} ms per case, medians\n`);
console.log('| workload | contender | decisions/s | ÷ ratekeeper | client CPU µs/decision | server CPU µs/decision |');
console.log('|---|---|---:|---:|---:|---:|');
for (const [w, c, rate, r, client, server] of table) {
  const cells = [Math.round(rate).toLocaleString('en'), r.toFixed(2), client.toFixed(1), server.toFixed(1)];
  console.log(`| ${w} | ${c} | ${cells.join(' | ')} |`);
}
const ratio = (w) => {
  const find = (n) => table.find((t) => t[0] === w && t[1] === n)[2];
  return find('ratekeeper') / find('rlf');
};
console.log(`\nratekeeper ÷ rate-limiter-flexible, admitted at 32 in flight: ${ratio('admitted, 32 in flight').toFixed(2)}× (target ≥ 1.5×)`);

store.close();
redis.disconnect();
