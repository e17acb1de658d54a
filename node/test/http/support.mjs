// What the HTTP middleware tests share (not a test file itself: no .test.
// in its name): servers on a loopback port the OS picks, requests with
// Node's own fetch, and the response fields a decision should give.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';

/** Serves `handler` (an Express app, any request listener) on 127.0.0.1, port 0. */
export async function listen(handler) {
  const server = createServer(handler);
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A Fastify app listening on 127.0.0.1, port 0: its base URL. */
export async function listenFastify(app) {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${app.server.address().port}`;
}

/**
 * `clients` concurrent clients each sending `requests` requests one after
 * the other to `url` with `headers`: every response, as
 * { status, headers, body (parsed JSON when it is JSON) }.
 */
export async function hammer(url, { clients, requests, headers = {}, method = 'GET' }) {
  const responses = [];
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = 0; i < requests; i++) responses.push(await send(url, { headers, method }));
    }),
  );
  return responses;
}

/** One request: { status, headers, body }. */
export async function send(url, { headers = {}, method = 'GET' } = {}) {
  const response = await fetch(url, { headers, method });
  const text = await response.text();
  const type = response.headers.get('content-type') ?? '';
  return { status: response.status, headers: response.headers, body: type.includes('json') && text !== '' ? JSON.parse(text) : text };
}

/** Whole seconds, rounded up, of milliseconds. */
const seconds = (ms) => Math.ceil(ms / 1000);

/**
 * Asserts that a response's rate-limit fields are exactly what `decision`
 * (its fields as JSON: limit, remaining, resetAfterMs, retryAfterMs,
 * windowMs, allowed) says in `style` for the policy `name`, written here
 * from the drafts, independently of the library: draft-8
 * (draft-ietf-httpapi-ratelimit-headers-08 §3, §4), draft-7 and draft-6
 * as express-rate-limit sends them, Retry-After (RFC 9110 §10.2.3) on a
 * refusal only.
 */
export function assertFields(headers, decision, { style = 'draft-8', name, legacy = false } = {}) {
  const { limit, remaining } = decision;
  const w = seconds(decision.windowMs);
  const t = seconds(decision.resetAfterMs);
  const expected = {};
  if (style === 'draft-8') {
    expected['ratelimit-policy'] = `"${name}";q=${limit};w=${w}`;
    expected.ratelimit = `"${name}";r=${remaining};t=${t}`;
  } else if (style === 'draft-7') {
    expected['ratelimit-policy'] = `${limit};w=${w}`;
    expected.ratelimit = `limit=${limit}, remaining=${remaining}, reset=${t}`;
  } else if (style === 'draft-6') {
    expected['ratelimit-policy'] = `${limit};w=${w}`;
    expected['ratelimit-limit'] = String(limit);
    expected['ratelimit-remaining'] = String(remaining);
    expected['ratelimit-reset'] = String(t);
  }
  if (!decision.allowed) expected['retry-after'] = String(seconds(decision.retryAfterMs));
  if (legacy) {
    expected['x-ratelimit-limit'] = String(limit);
    expected['x-ratelimit-remaining'] = String(remaining);
  }
  const actual = {};
  for (const [field, value] of headers) {
    if (/^(ratelimit|x-ratelimit|retry-after)/.test(field) && field !== 'x-ratelimit-reset') actual[field] = value;
  }
  assert.deepEqual(actual, expected);
  if (legacy) {
    // Epoch seconds of the reset: now + t, give or take the second the request took.
    const reset = Number(headers.get('x-ratelimit-reset'));
    const now = Date.now() / 1000;
    assert.ok(Math.abs(reset - (now + t)) <= 2, `X-RateLimit-Reset ${reset}, now ${now}, t ${t}`);
  }
}
