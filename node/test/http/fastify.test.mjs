// The Fastify plugin on real Fastify servers on loopback, with real HTTP
// requests (Node's fetch).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import Fastify from 'fastify';
import { HttpLimiter, ManualClock, fastifyRateLimit, codes, responseFields } from 'ratekeeper';
import { assertFields, hammer, listenFastify, send } from './support.mjs';

const apps = [];
after(() => Promise.all(apps.map((a) => a.close())));

/** A Fastify app built by `build(app)`, listening: its base URL. */
async function serve(build) {
  const app = Fastify();
  apps.push(app);
  await build(app);
  return listenFastify(app);
}

const answer = async (request) => ({ admitted: request.rateLimit });
const refusedBody = (request, decision) => ({ refused: decision });
const decisionOf = (response) => response.body.admitted ?? response.body.refused;
const statuses = async (url, n, init) => {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await send(url, init)).status);
  return out;
};

describe('fastifyRateLimit', () => {
  test('N concurrent clients per key × M requests: exactly the limit admitted per key', async () => {
    const url = await serve(async (app) => {
      await app.register(fastifyRateLimit, { limit: '20/hour', key: { header: 'x-client' }, body: refusedBody });
      app.get('/', answer);
    });
    const results = await Promise.all(
      ['alice', 'bob', 'carol'].map((key) => hammer(url, { clients: 8, requests: 5, headers: { 'x-client': key } })),
    );
    for (const responses of results) {
      assert.equal(responses.filter((r) => r.status === 200).length, 20);
      assert.equal(responses.filter((r) => r.status === 429).length, 20);
      for (const r of responses) assertFields(r.headers, decisionOf(r), { name: '20-in-1hr' });
    }
  });

  test('request after request, one limit or several: the fields are the library\'s for the decisions, the decision on the request', async () => {
    // The plugin's first admitted request writes the fields in full, later
    // ones in the short form (RateLimit alone, the policy kept): a twin
    // limiter on a clock of its own says what each should be.
    // Eight items: longer than the native stack text, the general path.
    const eight = '3/minute; 5/hour; 6/day; 7/month; 8/year; 9 per 2 hours; 10 per 3 days; 11 per 4 months';
    for (const limit of ['3/minute', '3/minute; 5/hour', eight]) {
      const clock = new ManualClock();
      const app = Fastify();
      apps.push(app);
      await app.register(fastifyRateLimit, { limit, clock, body: refusedBody });
      app.get('/', answer);
      const twinClock = new ManualClock();
      const twin = new HttpLimiter(limit, { clock: twinClock });
      const statuses = [];
      for (let i = 0; i < 8; i++) {
        const response = await app.inject({ method: 'GET', url: '/' });
        const { decision, parts } = twin.checkEach('127.0.0.1');
        const expected = responseFields(decision, { parts: parts.map((d, j) => [twin.policyNames[j], d]) });
        const actual = Object.fromEntries(Object.entries(response.headers).filter(([name]) => /^(ratelimit|retry-after)/.test(name)));
        const wanted = Object.fromEntries(Object.entries(expected).map(([name, value]) => [name.toLowerCase(), value]));
        assert.deepEqual(actual, wanted, `${limit}: request ${i + 1}`);
        const body = response.json();
        assert.deepEqual(body.admitted ?? body.refused, JSON.parse(JSON.stringify(decision)), `${limit}: request ${i + 1}`);
        assert.equal(response.statusCode, decision.allowed ? 200 : 429);
        statuses.push(response.statusCode);
        clock.advance(7_000);
        twinClock.advance(7_000);
      }
      assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429, 429, 429]);
    }
  });

  test('per-route config: its own limit, merged over the plugin options; false exempts', async () => {
    const url = await serve(async (app) => {
      await app.register(fastifyRateLimit, { limit: '2/hour', body: refusedBody, standardHeaders: 'draft-7' });
      app.get('/default', answer);
      app.get('/strict', { config: { rateLimit: { limit: '1/hour' } } }, answer);
      app.get('/free', { config: { rateLimit: false } }, answer);
    });
    assert.deepEqual(await statuses(`${url}/default`, 3), [200, 200, 429]);
    assert.deepEqual(await statuses(`${url}/strict`, 2), [200, 429]);
    assert.deepEqual(await statuses(`${url}/free`, 4), [200, 200, 200, 200]);
    const strict = await send(`${url}/strict`);
    // The route's limit, with the plugin's header style.
    assertFields(strict.headers, decisionOf(strict), { style: 'draft-7' });
    assert.equal(decisionOf(strict).limit, 1);
    assert.equal((await send(`${url}/free`)).headers.get('ratelimit'), null);
  });

  test('registered at the root, it limits the routes of every context below (as fastify-plugin would)', async () => {
    const url = await serve(async (app) => {
      await app.register(fastifyRateLimit, { limit: '1/hour' });
      app.get('/root', answer);
      await app.register(async (child) => {
        child.get('/child', answer);
      });
    });
    assert.deepEqual(await statuses(`${url}/root`, 2), [200, 429]);
    // The same client's limit: the plugin's one limiter, shared by every route without config.
    assert.deepEqual(await statuses(`${url}/child`, 1), [429]);
  });

  test('registered in a context, it limits that context only: encapsulation is respected', async () => {
    const url = await serve(async (app) => {
      app.get('/outside', answer);
      await app.register(async (limited) => {
        await limited.register(fastifyRateLimit, { limit: '1/hour' });
        limited.get('/inside', answer);
        await limited.register(async (grandchild) => grandchild.get('/below', answer));
      });
      await app.register(async (sibling) => sibling.get('/sibling', answer));
    });
    assert.deepEqual(await statuses(`${url}/inside`, 2), [200, 429]);
    assert.deepEqual(await statuses(`${url}/below`, 1), [429]);
    assert.deepEqual(await statuses(`${url}/outside`, 3), [200, 200, 200]);
    assert.deepEqual(await statuses(`${url}/sibling`, 3), [200, 200, 200]);
  });

  test('global: false limits only the routes that ask', async () => {
    const url = await serve(async (app) => {
      await app.register(fastifyRateLimit, { global: false, standardHeaders: 'draft-6' });
      app.get('/open', answer);
      app.get('/limited', { config: { rateLimit: { limit: '1/hour' } } }, answer);
    });
    assert.deepEqual(await statuses(`${url}/open`, 3), [200, 200, 200]);
    assert.deepEqual(await statuses(`${url}/limited`, 2), [200, 429]);
  });

  test('a GET route and its HEAD route share one limit', async () => {
    const url = await serve(async (app) => {
      await app.register(fastifyRateLimit, { global: false });
      app.get('/r', { config: { rateLimit: { limit: '2/hour' } } }, answer);
    });
    assert.deepEqual([(await send(`${url}/r`)).status, (await send(`${url}/r`, { method: 'HEAD' })).status], [200, 200]);
    assert.equal((await send(`${url}/r`, { method: 'HEAD' })).status, 429);
  });

  test('a spoofed X-Forwarded-For from an untrusted peer changes nothing; a trusted proxy is followed', async () => {
    const url = await serve(async (app) => {
      await app.register(fastifyRateLimit, { limit: '1/hour' });
      app.get('/', answer);
      app.get('/proxied', { config: { rateLimit: { limit: '1/hour', trustedProxies: ['127.0.0.1'] } } }, answer);
    });
    const spoof = (i) => ({ headers: { 'x-forwarded-for': `203.0.113.${i}` } });
    assert.deepEqual([(await send(url, spoof(1))).status, (await send(url, spoof(2))).status], [200, 429]);
    const proxied = `${url}/proxied`;
    assert.deepEqual(
      [(await send(proxied, spoof(1))).status, (await send(proxied, spoof(2))).status, (await send(proxied, spoof(1))).status],
      [200, 200, 429],
    );
  });

  test('the plugin carries the fastify-plugin markers, and bad options fail the registration', async () => {
    assert.equal(fastifyRateLimit[Symbol.for('skip-override')], true);
    assert.equal(fastifyRateLimit[Symbol.for('fastify.display-name')], 'ratekeeper');
    const app = Fastify();
    apps.push(app);
    app.register(fastifyRateLimit, { limit: '1/fortnight' });
    await assert.rejects(app.ready(), { name: 'RangeError', code: codes.invalidArgument, position: 2 });
  });
});
