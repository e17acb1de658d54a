// TLS and ACL users from Node.js, against the servers of
// tests/redis/with-redis --tls (npm run test:redis-tls): the store's
// options (`username`, `password`, `tls` with tls.connect's names), the
// typed errors (ERR_RATEKEEPER_REDIS_TLS, ERR_RATEKEEPER_REDIS_AUTH), and
// exact mode's own socket (the pipe, bindings/node/src/redis/pipe.rs)
// speaking TLS: a certificate to trust, a client certificate, a name.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { RedisLimiter, RedisStore, codes } from '../../index.mjs';

/** An environment variable tests/redis/with-redis --tls sets. */
function env(name) {
  const value = process.env[`RATEKEEPER_REDIS_TLS_${name}`];
  if (!value) throw new Error(`RATEKEEPER_REDIS_TLS_${name} is not set: run under tests/redis/with-redis --tls`);
  return value;
}

const URL_ = env('URL');
const CA = env('CA');
const CERT = env('CERT');
const KEY = env('KEY');
const GCRA = { algorithm: 'gcra', maxBurst: 999, countPerPeriod: 1000, periodMs: 1000 };
// A timeout far above a round trip: a loaded machine must not fail a check.
const SLOW = { timeoutMs: 2_000, connectTimeoutMs: 2_000 };

let names = 0;
const unique = (label) => `node-tls-test:${label}:${process.pid}:${Date.now()}:${names++}`;

/** `redis-cli` over TLS (with the client certificate) to the server at `url`. */
function cli(url, ...args) {
  const port = new URL(url).port;
  const out = spawnSync(
    'redis-cli',
    ['--tls', '--cacert', CA, '--cert', CERT, '--key', KEY, '-h', '127.0.0.1', '-p', port, ...args],
    { encoding: 'utf8', timeout: 10_000 },
  );
  if (out.status !== 0) throw new Error(`redis-cli ${args.join(' ')}: ${out.stderr || out.error}`);
  return out.stdout.trim();
}

/** How many times the server at `url` has run `command`. */
function commandCalls(url, command) {
  const line = cli(url, 'INFO', 'commandstats')
    .split('\n')
    .find((l) => l.startsWith(`cmdstat_${command}:`));
  return line ? Number(/calls=(\d+)/.exec(line)[1]) : 0;
}

/** Checks `n` keys at once (one turn of the event loop: one batch). */
const batch = (limiter, n, label = 'k') =>
  Promise.all(Array.from({ length: n }, (_, i) => limiter.check(`${label}${i}`)));

/**
 * Batches until the pipe carries them, which shows that the store's own
 * socket is open, over TLS: after a SCRIPT FLUSH only the pipe sends the
 * script again as EVAL (the store's own connection loads it with SCRIPT
 * LOAD and runs EVALSHA).
 */
async function untilThePipeCarries(url, limiter) {
  const start = performance.now();
  for (;;) {
    cli(url, 'SCRIPT', 'FLUSH');
    const before = commandCalls(url, 'eval');
    const answers = await batch(limiter, 8);
    if (commandCalls(url, 'eval') === before + 1) {
      assert.ok(answers.every((d) => d.allowed));
      return;
    }
    assert.ok(performance.now() - start < 3000, 'the pipe did not carry checks within 3 s');
    await sleep(10);
  }
}

/** Exact mode, through the pipe, decides as it must: a burst of 5, then no. */
async function decides(store, url) {
  const limiter = new RedisLimiter(store, unique('exact'), GCRA);
  await untilThePipeCarries(url, limiter);
  const evalsha = commandCalls(url, 'evalsha');
  const hourly = new RedisLimiter(store, unique('burst'), { ...GCRA, maxBurst: 4, countPerPeriod: 1, periodMs: 3_600_000 });
  const answers = await Promise.all(Array.from({ length: 8 }, () => hourly.check('k')));
  assert.deepEqual(
    answers.map((d) => d.allowed),
    [true, true, true, true, true, false, false, false],
  );
  assert.ok(commandCalls(url, 'evalsha') > evalsha, 'the checks ran in Redis');
  assert.equal(store.isDown, false);
}

/** Asserts that `promise` rejects with an `Error` of `code` whose message matches `pattern`. */
async function rejectsWith(promise, code, pattern) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof Error, String(e));
    assert.equal(e.code, code, `${e.code}: ${e.message}`);
    assert.match(e.message, pattern);
    return true;
  });
}

test('a CA to trust: the store and its pipe speak TLS (CA as a Buffer, a string, an array)', async () => {
  for (const ca of [readFileSync(CA), readFileSync(CA, 'utf8'), [readFileSync(CA)]]) {
    const store = await RedisStore.connect(URL_, { ...SLOW, tls: { ca } });
    await decides(store, URL_);
    store.close();
  }
});

test('a redis:// URL with tls options speaks TLS too', async () => {
  const plain = URL_.replace('rediss://', 'redis://');
  const store = await RedisStore.connect(plain, { ...SLOW, tls: { ca: readFileSync(CA) } });
  await decides(store, URL_);
  store.close();
});

test('mutual TLS: a client certificate where the server requires one', async () => {
  const url = env('MTLS_URL');
  const tls = { ca: readFileSync(CA), cert: readFileSync(CERT), key: readFileSync(KEY, 'utf8') };
  const store = await RedisStore.connect(url, { ...SLOW, tls });
  await decides(store, url);
  store.close();
});

test('a certificate not trusted, for another name, or expired: ERR_RATEKEEPER_REDIS_TLS', async () => {
  await rejectsWith(
    RedisStore.connect(URL_, { ...SLOW, tls: { ca: readFileSync(env('WRONG_CA')) } }),
    codes.redisTls,
    /TLS/i,
  );
  await rejectsWith(
    RedisStore.connect(env('OTHER_NAME_URL'), { ...SLOW, tls: { ca: readFileSync(CA) } }),
    codes.redisTls,
    /TLS/i,
  );
  await rejectsWith(
    RedisStore.connect(env('EXPIRED_URL'), { ...SLOW, tls: { ca: readFileSync(CA) } }),
    codes.redisTls,
    /TLS/i,
  );
});

test('tls.servername: the name checked, by the store and its pipe, when the URL has an IP address', async () => {
  // 127.0.0.1, whose certificate is for elsewhere.invalid only.
  const url = env('OTHER_NAME_URL');
  const store = await RedisStore.connect(url, { ...SLOW, tls: { ca: readFileSync(CA), servername: 'elsewhere.invalid' } });
  await decides(store, url);
  store.close();
  await rejectsWith(
    RedisStore.connect(url, { ...SLOW, tls: { ca: readFileSync(CA), servername: 'localhost' } }),
    codes.redisTls,
    /another name/,
  );
});

test('rejectUnauthorized: false verifies nothing (another name, another CA)', async () => {
  const url = env('OTHER_NAME_URL');
  const store = await RedisStore.connect(url, {
    ...SLOW,
    tls: { ca: readFileSync(env('WRONG_CA')), rejectUnauthorized: false },
  });
  await decides(store, url);
  store.close();
});

test('an ACL user granted the least privilege decides, through the pipe too', async () => {
  const options = { ...SLOW, username: env('ACL_USER'), password: env('ACL_PASSWORD'), tls: { ca: readFileSync(CA) } };
  const store = await RedisStore.connect(URL_, options);
  await decides(store, URL_);
  store.close();
  // The same credentials in the URL.
  const inUrl = URL_.replace('rediss://', `rediss://${env('ACL_USER')}:${env('ACL_PASSWORD')}@`);
  const again = await RedisStore.connect(inUrl, { ...SLOW, tls: { ca: readFileSync(CA) } });
  await decides(again, URL_);
  again.close();
});

test('a user without EVALSHA: ERR_RATEKEEPER_REDIS_AUTH naming NOPERM, and the store stays up', async () => {
  const store = await RedisStore.connect(URL_, {
    ...SLOW,
    username: env('NOSCRIPT_USER'),
    password: env('NOSCRIPT_PASSWORD'),
    tls: { ca: readFileSync(CA) },
  });
  const limiter = new RedisLimiter(store, unique('noperm'), GCRA);
  // Before the pipe opens (the store's connection) and after (the pipe's).
  for (let i = 0; i < 20; i++) {
    await rejectsWith(limiter.check('k'), codes.redisAuth, /NOPERM/);
    await rejectsWith(batch(limiter, 8), codes.redisAuth, /NOPERM/);
    await sleep(5);
  }
  assert.equal(store.isDown, false);
  store.close();
});

test('a wrong password: ERR_RATEKEEPER_REDIS_AUTH', async () => {
  await rejectsWith(
    RedisStore.connect(URL_, {
      ...SLOW,
      username: env('ACL_USER'),
      password: 'not-the-password',
      tls: { ca: readFileSync(CA) },
    }),
    codes.redisAuth,
    /WRONGPASS|password/i,
  );
});

test('bad options: TypeErrors and RangeErrors naming the option, before connecting', async () => {
  const bad = [
    [{ tls: true }, TypeError, codes.invalidArgType],
    [{ tls: { ca: readFileSync(CA), verify: false } }, TypeError, codes.invalidOption],
    [{ tls: { ca: 42 } }, TypeError, codes.invalidArgType, 'tls.ca'],
    [{ tls: { ca: [readFileSync(CA), 42] } }, TypeError, codes.invalidArgType, 'tls.ca'],
    [{ tls: { ca: '' } }, RangeError, codes.invalidArgument, 'tls.ca'],
    [{ tls: { cert: readFileSync(CERT) } }, RangeError, codes.invalidArgument, 'tls.key'],
    [{ tls: { key: readFileSync(KEY) } }, RangeError, codes.invalidArgument, 'tls.cert'],
    [{ tls: { servername: '' } }, RangeError, codes.invalidArgument, 'tls.servername'],
    [{ tls: { servername: 7 } }, TypeError, codes.invalidArgType, 'tls.servername'],
    [{ tls: { rejectUnauthorized: 'no' } }, TypeError, codes.invalidArgType, 'tls.rejectUnauthorized'],
    [{ username: 1 }, TypeError, codes.invalidArgType, 'username'],
    [{ username: '' }, RangeError, codes.invalidArgument, 'username'],
    [{ password: null }, TypeError, codes.invalidArgType, 'password'],
  ];
  for (const [options, kind, code, argument] of bad) {
    const start = performance.now();
    await assert.rejects(RedisStore.connect('rediss://127.0.0.1:1/', options), (e) => {
      assert.ok(e instanceof kind, `${JSON.stringify(Object.keys(options))}: ${e}`);
      assert.equal(e.code, code, e.message);
      if (argument !== undefined) assert.equal(e.argument, argument, e.message);
      return true;
    });
    assert.ok(performance.now() - start < 200, 'refused before connecting');
  }
});
