// The middleware's own cost, without HTTP: each Express middleware called
// directly on a request and response object of its own, and each Fastify
// plugin's `onRequest` hooks (as the plugin put them on a route) on a
// request and reply of their own, in one process, interleaved. A quick check beside bench.mjs's real load, which only a
// quiet machine measures well.
//
//   (cd benches/http/node && npm ci && node direct.mjs [--rounds N] [--ms MS] [--json FILE])
//
// --json FILE writes the ratekeeper-bench/1 suite `http-node-direct`
// (scripts/bench.sh passes it): the time each middleware adds, the peer
// the reference.
//
// Express: a request is `await new Promise((next) => middleware(req, res,
// next))` with a fresh response object (what express-rate-limit's
// `res.append` needs); `none` is a middleware that only calls `next`, so
// `variant − none` is what the limiter adds. Fastify: the route's
// `onRequest` hook as Fastify runs it (called with `done`, or awaited when
// it returns a promise); `none`'s only calls `done`. Each limit is out of reach, so every request is
// admitted after a whole decision, with draft-8 fields. One client
// address (the peers hash it per request; ratekeeper's keyed limiter
// finds it). Medians over rounds of MS milliseconds per variant.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const ratekeeper = require(path.join(here, '..', '..', '..', 'node'));
const { rateLimit: erl } = require('express-rate-limit');

const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : fallback);
const ROUNDS = option('--rounds', 7);
const MS = option('--ms', 500);
const jsonFile = argv.includes('--json') ? argv[argv.indexOf('--json') + 1] : undefined;
const HOUR = 3_600_000;
const OUT_OF_REACH = 1_000_000_000;

/** A response as the middleware sees it: Node's header methods and Express's `append`. */
class Response {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  #headers = new Map();
  setHeader(name, value) {
    this.#headers.set(name.toLowerCase(), value);
    return this;
  }
  getHeader(name) {
    return this.#headers.get(name.toLowerCase());
  }
  hasHeader(name) {
    return this.#headers.has(name.toLowerCase());
  }
  append(name, value) {
    const prev = this.getHeader(name);
    return this.setHeader(name, prev === undefined ? value : [].concat(prev, value));
  }
  status(code) {
    this.statusCode = code;
    return this;
  }
  end() {
    this.writableEnded = true;
  }
  send() {
    this.end();
  }
  once() {
    return this;
  }
}

const request = () => ({
  headers: { host: 'localhost', 'user-agent': 'direct.mjs', accept: '*/*' },
  socket: { remoteAddress: '127.0.0.1' },
  method: 'GET',
  url: '/',
  originalUrl: '/',
  ip: '127.0.0.1',
  app: { get: () => false },
});

const expressVariants = {
  none: (req, res, next) => next(),
  ratekeeper: ratekeeper.rateLimit({ limit: `${OUT_OF_REACH}/hour` }),
  'express-rate-limit': erl({ windowMs: HOUR, limit: OUT_OF_REACH, standardHeaders: 'draft-8', legacyHeaders: false }),
};

/** A Fastify reply as an `onRequest` hook sees it. */
class Reply {
  headers = {};
  header(name, value) {
    this.headers[name.toLowerCase()] = value;
    return this;
  }
  code() {
    return this;
  }
  send() {
    return this;
  }
}

const fastifyRequest = () => ({
  headers: { host: 'localhost', 'user-agent': 'direct.mjs', accept: '*/*' },
  raw: { socket: { remoteAddress: '127.0.0.1' } },
  socket: { remoteAddress: '127.0.0.1' },
  ip: '127.0.0.1',
  method: 'GET',
  url: '/',
  routeOptions: { config: {} },
});

/** The `onRequest` hooks a Fastify app gives its route `/` with `limiter` registered. */
async function fastifyHooks(limiter) {
  const app = require('fastify')();
  if (limiter === 'ratekeeper') await app.register(ratekeeper.fastifyRateLimit, { limit: `${OUT_OF_REACH}/hour` });
  if (limiter === '@fastify/rate-limit') {
    await app.register(require('@fastify/rate-limit'), { max: OUT_OF_REACH, timeWindow: HOUR, enableDraftSpec: true });
  }
  let hooks = [];
  app.addHook('onRoute', (route) => {
    hooks = [route.onRequest ?? []].flat();
  });
  app.get('/', async () => 'ok');
  await app.ready();
  return { app, hooks };
}
const fastifyVariants = {};
for (const name of ['none', 'ratekeeper', '@fastify/rate-limit']) fastifyVariants[name] = await fastifyHooks(name);

/**
 * Runs a route's one `onRequest` hook as Fastify's hook runner does: with
 * `done`, or awaited when it returns a promise. `none`'s is one that only
 * calls `done`.
 */
function runHook(hooks, request, reply) {
  if (hooks.length > 1) throw new Error('one hook expected');
  const hook = hooks[0] ?? ((req, rep, done) => done());
  return new Promise((done) => {
    const result = hook(request, reply, done);
    if (result && typeof result.then === 'function') result.then(() => done(), done);
  });
}

/** Requests per millisecond through `one` for MS ms, in batches. */
async function rate(one) {
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < MS) {
    for (let i = 0; i < 200; i++) await one();
    n += 200;
    now = performance.now();
  }
  return ((now - start) * 1e3) / n; // µs per request
}

const cases = [
  ...Object.entries(expressVariants).map(([name, mw]) => ({
    framework: 'express',
    name,
    one: () => new Promise((next) => mw(request(), new Response(), next)),
  })),
  ...Object.entries(fastifyVariants).map(([name, { hooks }]) => ({
    framework: 'fastify',
    name,
    one: () => runHook(hooks, fastifyRequest(), new Reply()),
  })),
];

// Warm-up (JIT), then interleaved rounds in a shuffled order.
for (const c of cases) for (let i = 0; i < 20_000; i++) await c.one();
const samples = new Map(cases.map((c) => [c, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const c of [...cases].sort(() => Math.random() - 0.5)) samples.get(c).push(await rate(c.one));
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

console.log(`Node ${process.version}, ${ROUNDS} rounds × ${MS} ms per variant, medians\n`);
console.log('| framework | variant | µs/request | added µs |');
console.log('|---|---|---:|---:|');
const tables = [];
for (const framework of ['express', 'fastify']) {
  const mine = cases.filter((c) => c.framework === framework);
  const none = median(samples.get(mine[0]));
  const added = {};
  for (const c of mine) {
    const us = median(samples.get(c));
    added[c.name] = us - none;
    console.log(`| ${framework} | ${c.name} | ${us.toFixed(2)} | ${c.name === 'none' ? '—' : (us - none).toFixed(2)} |`);
  }
  const peer = mine[2].name;
  console.log(`|  | ratekeeper ÷ ${peer} | | ${(added.ratekeeper / added[peer]).toFixed(2)} |`);
  tables.push({
    title: `${framework === 'express' ? 'Express' : 'Fastify'}: ns added per request, no HTTP`,
    unit: 'ns',
    reference: peer,
    rows: ['ratekeeper', peer].map((name) => ({
      workload: 'added by the middleware (in process)',
      contender: name,
      value: added[name] * 1e3,
    })),
  });
}
if (jsonFile !== undefined) {
  const summary = {
    format: 'ratekeeper-bench/1',
    suite: 'http-node-direct',
    title: 'HTTP middleware on Node.js, without HTTP: the time each middleware adds',
    command: 'benches/http/node/direct.mjs',
    notes:
      `Node ${process.version}; each Express middleware called on a request and response of its own, each ` +
      "Fastify plugin's onRequest hook as Fastify runs it, in one process, interleaved; medians over " +
      `${ROUNDS} rounds of ${MS} ms per variant, less a middleware that only calls next/done. The limit is ` +
      'out of reach (every request admitted after a whole decision), draft-8 fields. Steadier than the ' +
      "load figures on a small machine; ratio: time ÷ the peer's (issue #27's target: ≤ 0.5).",
    tables,
  };
  writeFileSync(jsonFile, `${JSON.stringify(summary, null, 2)}\n`);
}
for (const { app } of Object.values(fastifyVariants)) await app.close();
