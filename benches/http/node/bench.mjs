// HTTP middleware under real HTTP load (issue #27): the same app with no
// limiter, with ratekeeper's, and with the peer users run today, in one run.
//
//   (cd node && npm ci && npm run build)           # the package, release build
//   (cd benches/http/node && npm ci && node bench.mjs [--rounds N] [--seconds S] [--connections C] [--json FILE]
//                                                     [--only express,fastify,redis])
//
//   Express  none | ratekeeper rateLimit()       | express-rate-limit 8 (memory store)
//   Fastify  none | ratekeeper fastifyRateLimit  | @fastify/rate-limit
//   Express through Redis (exact counts shared by every process):
//            none | rateLimit({ redis })         | express-rate-limit + rate-limit-redis (node-redis)
//
// direct.mjs measures the same middleware without HTTP (each called on
// objects of its own, in one process): a quick check on a busy machine.
//
// The Redis variants use RATEKEEPER_REDIS_URL; without it, bench.mjs runs
// itself again under tests/redis/with-redis, which starts a private
// redis-server on a free loopback port and stops it after.
//
// Each server runs in a process of its own (server.mjs) and autocannon
// loads it from this one; the limit is out of reach, so every request does
// a whole decision. A round runs every variant for S seconds in a shuffled
// order; the table gives each variant's median requests per second over
// the rounds, its median latency, and the middleware's added cost per
// request, 1/rps − 1/rps(none) in microseconds of the server's time (it is
// one process on one core: requests per second is its time per request).
// The ratio the issue asks for: ratekeeper's added cost ÷ the peer's
// (target ≤ 0.5); through Redis, ratekeeper's requests per second ÷ the
// peer's (target ≥ 1.5).
//
// --json FILE writes the ratekeeper-bench/1 format benches/report.py reads:
// one table per framework, ns of server time per request (1e9 ÷ requests
// per second) for none, ratekeeper and the peer, and what the middleware
// adds (that minus none's) for ratekeeper and the peer; the reference is
// the peer, so the ratio report.py computes is ratekeeper's ÷ the peer's.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const autocannon = require('autocannon');
const here = path.dirname(fileURLToPath(import.meta.url));

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : fallback);
const ROUNDS = option('--rounds', 3);
const SECONDS = option('--seconds', 4);
const CONNECTIONS = option('--connections', 32);
const jsonAt = argv.indexOf('--json');
const JSON_FILE = jsonAt >= 0 ? argv[jsonAt + 1] : undefined;
if (jsonAt >= 0 && (JSON_FILE === undefined || JSON_FILE.startsWith('--'))) throw new Error('--json needs a file name');

if (!process.env.RATEKEEPER_REDIS_URL) {
  // A private Redis for the Redis variants: run again under with-redis
  // (the JSON file's path made absolute, as the working folder may change).
  const withRedis = path.join(here, '..', '..', '..', 'tests', 'redis', 'with-redis');
  const args = argv.map((a, i) => (i === jsonAt + 1 && jsonAt >= 0 ? path.resolve(a) : a));
  const child = spawn(withRedis, [process.execPath, fileURLToPath(import.meta.url), ...args], { stdio: 'inherit' });
  const [code] = await once(child, 'exit');
  process.exit(code ?? 1);
}

// A framework's table: its variants (server.mjs's LIMITER), the peer's name.
const ALL_TABLES = [
  { key: 'express', framework: 'express', title: 'Express', limiters: { none: 'none', ours: 'ratekeeper', peer: 'peer' }, peer: 'express-rate-limit' },
  { key: 'fastify', framework: 'fastify', title: 'Fastify', limiters: { none: 'none', ours: 'ratekeeper', peer: 'peer' }, peer: '@fastify/rate-limit' },
  {
    key: 'redis',
    framework: 'express',
    title: 'Express through Redis',
    limiters: { none: 'none', ours: 'ratekeeperRedis', peer: 'peerRedis' },
    ours: 'ratekeeper (Redis, exact)',
    peer: 'express-rate-limit + rate-limit-redis',
    redis: true,
  },
];
const onlyAt = argv.indexOf('--only');
const only = onlyAt >= 0 ? argv[onlyAt + 1].split(',') : ALL_TABLES.map((t) => t.key);
const TABLES = ALL_TABLES.filter((t) => only.includes(t.key));
if (TABLES.length === 0) throw new Error(`--only: none of ${only} (express, fastify, redis)`);

async function start(variant) {
  const child = spawn(process.execPath, [path.join(here, 'server.mjs'), variant], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(createInterface({ input: child.stdout }), 'line');
  return { child, url: `http://127.0.0.1:${Number(line)}/` };
}

async function measure(variant) {
  const { child, url } = await start(variant);
  try {
    // A second of warm-up (JIT, connections), then the measured run.
    await autocannon({ url, connections: CONNECTIONS, duration: 1 });
    const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${variant}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99 };
  } finally {
    child.stdin.end();
    await once(child, 'exit');
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const variants = [...new Set(TABLES.flatMap((t) => Object.values(t.limiters).map((l) => `${t.framework}-${l}`)))];
const samples = Object.fromEntries(variants.map((v) => [v, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = [...variants].sort(() => Math.random() - 0.5);
  for (const v of order) samples[v].push(await measure(v));
}

const perRequestNs = (rps) => 1e9 / rps;
const tables = TABLES.map((t) => {
  const row = {};
  for (const [role, limiter] of Object.entries(t.limiters)) {
    const s = samples[`${t.framework}-${limiter}`];
    row[role] = { rps: median(s.map((x) => x.rps)), p50Ms: median(s.map((x) => x.p50)), p99Ms: median(s.map((x) => x.p99)) };
  }
  for (const role of ['ours', 'peer']) row[role].addedNs = perRequestNs(row[role].rps) - perRequestNs(row.none.rps);
  return { ...t, row, ratio: row.ours.addedNs / row.peer.addedNs, speedup: row.ours.rps / row.peer.rps };
});

const names = (t) => ({ none: 'none', ours: t.ours ?? 'ratekeeper', peer: t.peer });
if (JSON_FILE) {
  const summary = {
    format: 'ratekeeper-bench/1',
    suite: 'http-node',
    title: 'HTTP middleware on Node.js: Express and Fastify beside express-rate-limit and @fastify/rate-limit',
    command: `benches/http/node/bench.mjs --rounds ${ROUNDS} --seconds ${SECONDS} --connections ${CONNECTIONS}`,
    notes:
      `Node ${process.version}; each server one process (one core), autocannon with ${CONNECTIONS} connections in ` +
      `this process; ${ROUNDS} rounds of ${SECONDS} s per variant after 1 s of warm-up, in a shuffled order, medians. ` +
      'Every limit is out of reach (a billion an hour), so every request is admitted after a whole decision, with ' +
      'draft-8 fields where the middleware has them. Value: ns of server time per request (1e9 ÷ requests per ' +
      'second, also given); "added by the middleware" is that minus the same app without a limiter. Targets: ' +
      'ratekeeper adds ≤ 0.5× what the peer adds; through Redis (one local redis-server; ratekeeper in exact mode, ' +
      'one script run per request), ratekeeper serves ≥ 1.5× the peer\'s requests per second, a time ratio ≤ 0.67. ' +
      'On a 2-core machine autocannon, the server (and Redis) share the cores, and rounds differ by more than the ' +
      "middleware's cost (an added cost can come out negative): the next section, each middleware called without " +
      'HTTP, measures that cost.',
    tables: tables.map((t) => {
      const n = names(t);
      return {
        title: `${t.title}: ns of server time per request`,
        unit: 'ns',
        reference: t.peer,
        rows: [
          ...['none', 'ours', 'peer'].map((role) => ({
            workload: 'server time per request',
            contender: n[role],
            value: perRequestNs(t.row[role].rps),
            requests_per_second: t.row[role].rps,
            p50_ms: t.row[role].p50Ms,
            p99_ms: t.row[role].p99Ms,
          })),
          ...['ours', 'peer'].map((role) => ({ workload: 'added by the middleware', contender: n[role], value: t.row[role].addedNs })),
        ],
      };
    }),
  };
  writeFileSync(JSON_FILE, `${JSON.stringify(summary, null, 2)}\n`);
}

console.log(`${ROUNDS} rounds × ${SECONDS} s, ${CONNECTIONS} connections; medians\n`);
console.log('| framework | limiter | req/s | p50 ms | p99 ms | added µs/request |');
console.log('|---|---|---:|---:|---:|---:|');
for (const t of tables) {
  const n = names(t);
  for (const role of ['none', 'ours', 'peer']) {
    const r = t.row[role];
    const added = r.addedNs === undefined ? '—' : (r.addedNs / 1e3).toFixed(2);
    console.log(`| ${t.title} | ${n[role]} | ${Math.round(r.rps)} | ${r.p50Ms} | ${r.p99Ms} | ${added} |`);
  }
}
console.log('');
for (const t of tables) {
  if (t.redis) console.log(`${t.title}: ratekeeper's requests per second ÷ ${t.peer}'s = ${t.speedup.toFixed(2)} (target ≥ 1.5)`);
  else console.log(`${t.title}: ratekeeper's added cost ÷ ${t.peer}'s = ${t.ratio.toFixed(2)} (target ≤ 0.5)`);
}
