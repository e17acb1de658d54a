// One server of the HTTP bench (bench.mjs), in its own process:
//
//   node server.mjs VARIANT
//
// VARIANT is FRAMEWORK-LIMITER: express-none, express-ratekeeper,
// express-peer (express-rate-limit, memory store), fastify-none,
// fastify-ratekeeper, fastify-peer (@fastify/rate-limit), and through the
// Redis at RATEKEEPER_REDIS_URL: express-ratekeeperRedis (rateLimit with
// `redis`: exact mode, one script run per request) and express-peerRedis
// (express-rate-limit with rate-limit-redis on node-redis, as
// rate-limit-redis documents it). Every limiter has its limit out of reach
// (a billion an hour), so every request does the whole work of a decision
// and is admitted; each sends draft-8 fields where it can. Listens on
// 127.0.0.1, a port the OS picks, prints the port and serves until stdin
// closes.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const ratekeeper = require(path.join(here, '..', '..', '..', 'node'));

const variant = process.argv[2];
function redisUrl() {
  const url = process.env.RATEKEEPER_REDIS_URL;
  if (!url) throw new Error(`${variant}: RATEKEEPER_REDIS_URL is not set`);
  return url;
}
const [framework, limiter] = variant.split('-');
const HOUR = 3_600_000;
const OUT_OF_REACH = 1_000_000_000;
const body = { hello: 'world' };

// Names no other run uses, in the shared Redis.
const run = `http-bench:${process.pid}:${Date.now()}`;
let close;
if (framework === 'express') {
  const express = require('express');
  const app = express();
  /** What closes the Redis connection of a Redis variant. */
  let disconnect = () => {};
  if (limiter === 'ratekeeper') app.use(ratekeeper.rateLimit({ limit: `${OUT_OF_REACH}/hour` }));
  if (limiter === 'peer' || limiter === 'peerRedis') {
    const { rateLimit } = require('express-rate-limit');
    const options = { windowMs: HOUR, limit: OUT_OF_REACH, standardHeaders: 'draft-8', legacyHeaders: false };
    if (limiter === 'peerRedis') {
      const { createClient } = require('redis');
      const { RedisStore } = require('rate-limit-redis');
      const client = createClient({ url: redisUrl() });
      await client.connect();
      options.store = new RedisStore({ sendCommand: (...args) => client.sendCommand(args), prefix: `${run}:` });
      disconnect = () => client.destroy();
    }
    app.use(rateLimit(options));
  }
  if (limiter === 'ratekeeperRedis') {
    // The same timeout as the bench of benches/redis/node: a loaded machine
    // must not fail a decision that node-redis (no command timeout) would wait for.
    const store = await ratekeeper.RedisStore.connect(redisUrl(), { timeoutMs: 5_000 });
    app.use(ratekeeper.rateLimit({ limit: `${OUT_OF_REACH}/hour`, redis: store, name: run }));
    disconnect = () => store.close();
  }
  app.get('/', (req, res) => res.json(body));
  const server = app.listen(0, '127.0.0.1', () => console.log(server.address().port));
  close = () => {
    server.closeAllConnections();
    server.close();
    disconnect();
  };
} else if (framework === 'fastify') {
  const app = require('fastify')();
  if (limiter === 'ratekeeper') await app.register(ratekeeper.fastifyRateLimit, { limit: `${OUT_OF_REACH}/hour` });
  if (limiter === 'peer') {
    await app.register(require('@fastify/rate-limit'), { max: OUT_OF_REACH, timeWindow: HOUR, enableDraftSpec: true });
  }
  app.get('/', async () => body);
  await app.listen({ host: '127.0.0.1', port: 0 });
  console.log(app.server.address().port);
  close = () => app.close();
} else {
  console.error(`unknown variant ${variant}`);
  process.exit(2);
}
process.stdin.resume();
process.stdin.on('end', () => close());
