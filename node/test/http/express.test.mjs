// The Express middleware on a real Express server on loopback, with real
// HTTP requests (Node's fetch).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import express from 'express';
import { KeyedLimiter, rateLimit, codes } from 'ratekeeper';
import { assertFields, hammer, listen, send } from './support.mjs';

/** An Express app limited by `options`, answering with its decision. */
function app(options, configure) {
  const a = express();
  configure?.(a);
  a.use(rateLimit({ body: (req, decision) => ({ refused: decision }), ...options }));
  a.all('/{*path}', (req, res) => res.json({ admitted: req.rateLimit }));
  return a;
}

const servers = [];
async function serve(options, configure) {
  const server = await listen(app(options, configure));
  servers.push(server);
  return server.url;
}
after(() => Promise.all(servers.map((s) => s.close())));

const decisionOf = (response) => response.body.admitted ?? response.body.refused;

describe('rateLimit on Express', () => {
  test('N concurrent clients per key × M requests: exactly the limit admitted per key', async () => {
    const url = await serve({ limit: '25/hour', key: { header: 'x-client' } });
    const keys = ['alice', 'bob', 'carol'];
    const results = await Promise.all(
      keys.map((key) => hammer(url, { clients: 8, requests: 6, headers: { 'x-client': key } })),
    );
    for (const responses of results) {
      assert.equal(responses.length, 48);
      assert.equal(responses.filter((r) => r.status === 200).length, 25);
      assert.equal(responses.filter((r) => r.status === 429).length, 23);
      // Each admitted request saw a distinct remaining count: 24 … 0.
      const remaining = responses.filter((r) => r.status === 200).map((r) => decisionOf(r).remaining);
      assert.deepEqual(remaining.sort((a, b) => a - b), Array.from({ length: 25 }, (_, i) => i));
    }
  });

  for (const style of ['draft-8', 'draft-7', 'draft-6']) {
    test(`every response's ${style} fields are what its Decision says, admitted and refused`, async () => {
      const legacy = style === 'draft-6';
      const url = await serve({ limit: '3 per 2 minutes', algorithm: 'fixedWindow', standardHeaders: style, legacyHeaders: legacy });
      const responses = [];
      for (let i = 0; i < 5; i++) responses.push(await send(url));
      assert.deepEqual(responses.map((r) => r.status), [200, 200, 200, 429, 429]);
      for (const r of responses) {
        const decision = decisionOf(r);
        assert.equal(decision.allowed, r.status === 200);
        assertFields(r.headers, decision, { style, name: '3-in-2min', legacy });
      }
      assert.equal(responses[3].headers.get('content-type'), 'application/json; charset=utf-8');
    });
  }

  test("'none' sends no RateLimit fields, but Retry-After on a refusal", async () => {
    const url = await serve({ limit: '1/hour', standardHeaders: 'none' });
    const [first, second] = [await send(url), await send(url)];
    assert.equal(first.headers.get('ratelimit'), null);
    assert.equal(second.status, 429);
    assert.equal(second.headers.get('ratelimit-policy'), null);
    assert.equal(second.headers.get('retry-after'), String(Math.ceil(decisionOf(second).retryAfterMs / 1000)));
  });

  test('a spoofed X-Forwarded-For from an untrusted peer changes nothing', async () => {
    const url = await serve({ limit: '3/hour' });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await send(url, { headers: { 'x-forwarded-for': `203.0.113.${i}` } })).status);
    assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429]);
  });

  test('through a trusted proxy, each forwarded client has its own limit', async () => {
    const url = await serve({ limit: '2/hour', trustedProxies: ['loopback'] });
    const seen = [];
    for (const client of ['203.0.113.1', '203.0.113.2', '203.0.113.1', '203.0.113.1', '203.0.113.2']) {
      seen.push((await send(url, { headers: { 'x-forwarded-for': `198.51.100.9, ${client}` } })).status);
    }
    assert.deepEqual(seen, [200, 200, 200, 429, 200]);
    // Forwarded (RFC 7239) is preferred to X-Forwarded-For.
    const viaForwarded = await send(url, { headers: { forwarded: 'for=203.0.113.7', 'x-forwarded-for': '203.0.113.1' } });
    assert.equal(viaForwarded.status, 200);
  });

  test('IPv6 clients share their /56 by default, or each has its own with ipv6Prefix: 128', async () => {
    const block = ['2001:db8:0:100::1', '2001:db8:0:1ff:ffff::2', '2001:db8:0:180::3', '2001:db8:0:200::1'];
    for (const [ipv6Prefix, expected] of [
      [undefined, [200, 200, 429, 200]],
      [128, [200, 200, 200, 200]],
    ]) {
      const url = await serve({ limit: '2/hour', trustedProxies: ['loopback'], ipv6Prefix });
      const seen = [];
      for (const client of block) seen.push((await send(url, { headers: { 'x-forwarded-for': client } })).status);
      assert.deepEqual(seen, expected, `ipv6Prefix ${ipv6Prefix}`);
    }
  });

  test("Express's req.ip when the user says so, with its trust proxy setting", async () => {
    const url = await serve({ limit: '1/hour', key: (req) => req.ip }, (a) => a.set('trust proxy', 'loopback'));
    assert.equal((await send(url, { headers: { 'x-forwarded-for': '203.0.113.1' } })).status, 200);
    assert.equal((await send(url, { headers: { 'x-forwarded-for': '203.0.113.2' } })).status, 200);
    assert.equal((await send(url, { headers: { 'x-forwarded-for': '203.0.113.1' } })).status, 429);
  });

  test('exempt paths (and below) and methods are never limited', async () => {
    const url = await serve({ limit: '1/hour', exemptPaths: ['/health'], exemptMethods: ['options'] });
    for (let i = 0; i < 3; i++) {
      const health = await send(`${url}/health/db?deep=1`);
      assert.equal(health.status, 200);
      assert.equal(health.headers.get('ratelimit'), null);
      assert.equal((await send(`${url}/x`, { method: 'OPTIONS' })).status, 200);
    }
    assert.equal((await send(`${url}/healthz`)).status, 200);
    assert.equal((await send(`${url}/health2`)).status, 429);
  });

  test('a cost per request: a number or a function of the request', async () => {
    const url = await serve({ limit: '10/hour', cost: (req) => (req.path === '/big' ? 6 : 1) });
    assert.equal(decisionOf(await send(`${url}/big`)).remaining, 4);
    assert.equal((await send(`${url}/big`)).status, 429);
    assert.equal(decisionOf(await send(`${url}/small`)).remaining, 3);
    const fixed = await serve({ limit: '10/hour', cost: 4 });
    assert.deepEqual([(await send(fixed)).status, (await send(fixed)).status, (await send(fixed)).status], [200, 200, 429]);
  });

  test('the body hook builds the refusal: text, JSON, asynchronously; the default text otherwise', async () => {
    const text = await serve({ limit: '1/hour', body: async (req, d) => `slow down, ${req.method}: ${d.remaining}` });
    await send(text);
    const refused = await send(text);
    assert.equal(refused.status, 429);
    assert.equal(refused.body, 'slow down, GET: 0');
    assert.equal(refused.headers.get('content-type'), 'text/plain; charset=utf-8');
    const plain = await listen(express().use(rateLimit({ limit: '1/hour', statusCode: 503 })));
    servers.push(plain);
    await send(plain.url);
    const byDefault = await send(plain.url);
    assert.deepEqual([byDefault.status, byDefault.body], [503, 'Too many requests, please try again later.']);
  });

  test('any keyed limiter, synchronous or through a Promise, with its policy name', async () => {
    const keyed = new KeyedLimiter({ algorithm: 'gcra', maxBurst: 1, countPerPeriod: 2, periodMs: 3_600_000 }, { maxKeys: 10 });
    const slow = { check: async (key, cost) => keyed.check(key, cost) };
    const url = await serve({ limiter: slow, policy: 'gcra-2' });
    const responses = [await send(url), await send(url), await send(url)];
    assert.deepEqual(responses.map((r) => r.status), [200, 200, 429]);
    for (const r of responses) assertFields(r.headers, decisionOf(r), { name: 'gcra-2' });
  });

  test('an error of the limiter or the key goes to next(error)', async () => {
    const url = await serve({ limit: '5/hour', key: () => Promise.reject(new Error('no key')) }, (a) => {
      a.use('/never', (req, res) => res.end());
    });
    const failing = await listen(
      express()
        .use(rateLimit({ limit: '5/hour', key: () => 'x'.repeat(300) }))
        .use((error, req, res, next) => res.status(500).json({ code: error.code })),
    );
    servers.push(failing);
    assert.equal((await send(url)).status, 500);
    assert.deepEqual((await send(failing.url)).body, { code: codes.invalidArgument });
  });

  test('bad options are typed errors at setup', () => {
    assert.throws(() => rateLimit({ limit: '10/fortnight' }), { name: 'RangeError', code: codes.invalidArgument, position: 3 });
    assert.throws(() => rateLimit({ limit: '10/minute', standardHeaders: 'draft-9' }), {
      name: 'RangeError',
      code: codes.invalidArgument,
      argument: 'standardHeaders',
    });
    assert.throws(() => rateLimit({ limit: '10/minute', trustedProxies: ['10.0.0.0/33'] }), {
      name: 'RangeError',
      argument: 'entries[0]',
    });
    assert.throws(() => rateLimit({ limit: '10/minute', ipv6Prefix: 0 }), {
      name: 'RangeError',
      code: codes.invalidArgument,
      argument: 'ipv6Prefix',
    });
    assert.throws(() => rateLimit({ limit: '10/minute', limitt: 1 }), { name: 'TypeError', code: codes.invalidOption });
    assert.throws(() => rateLimit({ limit: '10/minute', limiter: new KeyedLimiter({ algorithm: 'fixedWindow', limit: 1, windowMs: 1 }, { maxKeys: 1 }) }), {
      name: 'TypeError',
      code: codes.invalidOption,
    });
    assert.throws(() => rateLimit({ limit: '10/minute', key: 'ip' }), { name: 'TypeError', code: codes.invalidArgType });
  });
});
