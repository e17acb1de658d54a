// HTTP middleware under real HTTP load (issue #27): the same app with no
// limiter, with ratekeeper's, and with the peer users run today, in one run.
//
//   (cd node && npm ci && npm run build)           # the package, release build
//   (cd benches/http/node && npm ci && node bench.mjs [--rounds N] [--seconds S] [--connections C] [--json])
//
//   Express  none | ratekeeper rateLimit()       | express-rate-limit 8 (memory store)
//   Fastify  none | ratekeeper fastifyRateLimit  | @fastify/rate-limit
//
// Each server runs in a process of its own (server.mjs) and autocannon
// loads it from this one; the limit is out of reach, so every request does
// a whole decision. A round runs every variant for S seconds in a shuffled
// order; the table gives each variant's median requests per second over
// the rounds, its median latency, and the middleware's added cost per
// request, 1/rps − 1/rps(none) in microseconds of the server's time (it is
// one process on one core: requests per second is its time per request).
// The ratio the issue asks for: ratekeeper's added cost ÷ the peer's
// (target ≤ 0.5).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
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
const JSON_OUT = argv.includes('--json');

const FRAMEWORKS = ['express', 'fastify'];
const LIMITERS = ['none', 'ratekeeper', 'peer'];
const PEERS = { express: 'express-rate-limit', fastify: '@fastify/rate-limit' };

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

const variants = FRAMEWORKS.flatMap((f) => LIMITERS.map((l) => `${f}-${l}`));
const samples = Object.fromEntries(variants.map((v) => [v, []]));
for (let round = 0; round < ROUNDS; round++) {
  const order = [...variants].sort(() => Math.random() - 0.5);
  for (const v of order) samples[v].push(await measure(v));
}

const results = {};
for (const f of FRAMEWORKS) {
  const row = {};
  for (const l of LIMITERS) {
    const s = samples[`${f}-${l}`];
    row[l] = { rps: median(s.map((x) => x.rps)), p50Ms: median(s.map((x) => x.p50)), p99Ms: median(s.map((x) => x.p99)) };
  }
  const perRequestUs = (rps) => 1e6 / rps;
  for (const l of ['ratekeeper', 'peer']) row[l].addedUs = perRequestUs(row[l].rps) - perRequestUs(row.none.rps);
  results[f] = { ...row, ratio: row.ratekeeper.addedUs / row.peer.addedUs };
}

if (JSON_OUT) {
  console.log(JSON.stringify({ rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, results }, null, 2));
} else {
  console.log(`${ROUNDS} rounds × ${SECONDS} s, ${CONNECTIONS} connections; medians\n`);
  console.log('| framework | limiter | req/s | p50 ms | p99 ms | added µs/request |');
  console.log('|---|---|---:|---:|---:|---:|');
  for (const f of FRAMEWORKS) {
    for (const l of LIMITERS) {
      const r = results[f][l];
      const name = l === 'peer' ? PEERS[f] : l;
      const added = r.addedUs === undefined ? '—' : r.addedUs.toFixed(2);
      console.log(`| ${f} | ${name} | ${Math.round(r.rps)} | ${r.p50Ms} | ${r.p99Ms} | ${added} |`);
    }
  }
  console.log('');
  for (const f of FRAMEWORKS) {
    console.log(`${f}: ratekeeper's added cost ÷ ${PEERS[f]}'s = ${results[f].ratio.toFixed(2)} (target ≤ 0.5)`);
  }
}
