#!/usr/bin/env node
// A server process of the Redis HTTP test (http.test.mjs), not a test itself:
//
//   node test/redis/http-server.mjs NAME LIMIT
//
// Serves Express on 127.0.0.1, a port the OS picks, limited by rateLimit()
// with LIMIT (limits text) shared through the Redis at RATEKEEPER_REDIS_URL
// under NAME; prints the port on its first line, serves until stdin closes.
// Each response's body is the decision's `remaining` and `allowed`.
import express from 'express';
import { createServer } from 'node:http';
import { RedisStore, rateLimit } from '../../index.mjs';

const [name, limit] = process.argv.slice(2);
const store = await RedisStore.connect(process.env.RATEKEEPER_REDIS_URL);
const app = express()
  .use(rateLimit({ limit, redis: store, name, key: { header: 'x-client' }, body: (req, d) => ({ allowed: d.allowed }) }))
  .get('/', (req, res) => res.json({ allowed: req.rateLimit.allowed, pid: process.pid }));
const server = createServer(app).listen(0, '127.0.0.1', () => console.log(server.address().port));
process.stdin.resume();
process.stdin.on('end', () => {
  server.closeAllConnections();
  server.close();
  store.close();
});
