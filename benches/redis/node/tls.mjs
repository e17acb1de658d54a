// TLS against plain TCP, from Node.js: ratekeeper's exact-mode GCRA (its
// checks on the store's own socket, a tls.connect one over TLS) beside
// rate-limiter-flexible's RateLimiterRedis on ioredis, 32 in flight, over
// TLS and over plain TCP, against one redis-server listening on both
// (benches/redis/tls/run starts it and sets RATEKEEPER_REDIS_URL,
// RATEKEEPER_REDIS_TLS_URL, RATEKEEPER_REDIS_TLS_CA and REDIS_PID).
//
//   node benches/redis/node/tls.mjs [--json FILE] [--quick]
//
// Each case keeps 32 decisions in flight for a fixed time (32 workers,
// each awaiting one decision after another, every one admitted) and counts
// decisions per second, and the server's CPU per decision (utime + stime
// of /proc/REDIS_PID/stat around the case). Rounds run the cases in a
// shuffled order; each figure is the median over the rounds.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const { RedisStore, RedisLimiter } = require(path.join(here, '..', '..', '..', 'node'));
const { Redis } = require('ioredis');
const { RateLimiterRedis } = require('rate-limiter-flexible');

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const jsonAt = argv.indexOf('--json');
const jsonFile = jsonAt >= 0 ? argv[jsonAt + 1] : undefined;
const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (benches/redis/tls/run sets it)`);
  return value;
};
const [plainUrl, tlsUrl, pid] = [env('RATEKEEPER_REDIS_URL'), env('RATEKEEPER_REDIS_TLS_URL'), env('REDIS_PID')];
const ca = readFileSync(env('RATEKEEPER_REDIS_TLS_CA'));
const ticks = Number(process.env.CLK_TCK ?? 100);

const ROUNDS = quick ? 3 : 5;
const CASE_MS = quick ? 500 : 1_500;
const IN_FLIGHT = 32;
const run = `tlsbench${process.pid}${Date.now()}`;

/** The server's CPU time so far (user + system), in µs. */
function serverCpu() {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) / ticks) * 1e6;
}

// Every call admitted (limits out of reach); a timeout far above any
// decision's time (ioredis has no command timeout by default).
const ADMIT = { algorithm: 'gcra', maxBurst: 1_000_000, countPerPeriod: 1_000_000, periodMs: 1_000 };
const stores = {
  plain: await RedisStore.connect(plainUrl, { timeoutMs: 5_000 }),
  tls: await RedisStore.connect(tlsUrl, { timeoutMs: 5_000, tls: { ca } }),
};
const clients = {
  plain: new Redis(plainUrl),
  tls: new Redis(tlsUrl, { tls: { ca } }),
};
await Promise.all(Object.values(clients).map((c) => c.ping()));

const keys = Array.from({ length: 1_000 }, (_, i) => `user-${i}`);
const cases = [];
for (const transport of ['plain', 'tls']) {
  const limiter = new RedisLimiter(stores[transport], `${run}:rk-${transport}`, ADMIT);
  const rlf = new RateLimiterRedis({
    storeClient: clients[transport],
    keyPrefix: `${run}:rlf-${transport}`,
    points: 1e12,
    duration: 3_600,
  });
  cases.push({ name: `ratekeeper, ${transport === 'tls' ? 'TLS' : 'plain TCP'}`, decide: (k) => limiter.check(k).then((d) => d.allowed) });
  cases.push({ name: `rlf + ioredis, ${transport === 'tls' ? 'TLS' : 'plain TCP'}`, decide: (k) => rlf.consume(k).then(() => true) });
}

async function drive(c, ms) {
  let decisions = 0;
  let next = 0;
  const cpu = serverCpu();
  const start = performance.now();
  const deadline = start + ms;
  const worker = async () => {
    while (performance.now() < deadline) {
      const key = keys[next];
      next = next + 1 === keys.length ? 0 : next + 1;
      if (!(await c.decide(key))) throw new Error(`${c.name}: refused`);
      decisions++;
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const seconds = (performance.now() - start) / 1e3;
  return { perSecond: decisions / seconds, serverCpu: (serverCpu() - cpu) / decisions };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

for (const c of cases) await drive(c, 200); // warm up: scripts loaded, sockets open
const results = new Map(cases.map((c) => [c.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = [...cases].sort(() => Math.random() - 0.5);
  for (const c of order) results.get(c.name).push(await drive(c, CASE_MS));
}

const rows = [];
const figures = {};
for (const c of cases) {
  const r = results.get(c.name);
  const perSecond = median(r.map((x) => x.perSecond));
  const cpu = median(r.map((x) => x.serverCpu));
  figures[c.name] = { perSecond, cpu };
  console.log(`${c.name.padEnd(26)} ${perSecond.toFixed(0).padStart(7)} decisions/s  ${cpu.toFixed(2).padStart(6)} µs server CPU per decision`);
  rows.push({ workload: 'decisions per second (32 in flight)', contender: c.name, value: 1e9 / perSecond });
  rows.push({ workload: 'server CPU per decision', contender: c.name, value: cpu * 1e3 });
}
// Ratios of the rounds' figures, medians.
const ratio = (a, b, field) => median(results.get(a).map((x, i) => x[field] / results.get(b)[i][field]));
const notes = [
  `ratekeeper TLS ÷ plain TCP: decisions per second ${ratio('ratekeeper, TLS', 'ratekeeper, plain TCP', 'perSecond').toFixed(2)}×, server CPU per decision ${ratio('ratekeeper, TLS', 'ratekeeper, plain TCP', 'serverCpu').toFixed(2)}×`,
  `ratekeeper ÷ rlf + ioredis over TLS: decisions per second ${ratio('ratekeeper, TLS', 'rlf + ioredis, TLS', 'perSecond').toFixed(2)}× (target ≥ 1.5×), server CPU per decision ${ratio('ratekeeper, TLS', 'rlf + ioredis, TLS', 'serverCpu').toFixed(2)}×`,
  `ratekeeper ÷ rlf + ioredis over plain TCP: decisions per second ${ratio('ratekeeper, plain TCP', 'rlf + ioredis, plain TCP', 'perSecond').toFixed(2)}×`,
];
for (const note of notes) console.log(note);

if (jsonFile) {
  const doc = {
    format: 'ratekeeper-bench/1',
    suite: 'redis-tls-node',
    title: 'Redis over TLS against plain TCP, from Node.js, beside rate-limiter-flexible on ioredis',
    command: 'benches/redis/tls/run',
    notes: `One redis-server with a plain and a TLS port (P-256, TLS 1.3). 32 in flight, every decision admitted; ${ROUNDS} rounds of ${CASE_MS} ms per case, shuffled; medians. Server CPU from /proc/PID/stat. ${notes.join('. ')}.`,
    tables: [{ title: 'TLS against plain TCP (32 in flight)', reference: 'ratekeeper, TLS', rows }],
  };
  writeFileSync(jsonFile, JSON.stringify(doc, null, 2));
}
for (const s of Object.values(stores)) s.close();
for (const c of Object.values(clients)) c.disconnect();
