// Exact mode against a real Redis (tests/redis/with-redis): each
// algorithm's decisions, a limit shared by several stores (as by several
// processes), remembered refusals, closing, invalid arguments, and an event
// loop that never blocks while decisions are in flight.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { Decision, KeyedLimiter, ManualClock, RedisLimiter, RedisStore, codes } from '../../index.mjs';
import { OPTION, RANGE, TYPE, check } from '../expect-error.mjs';
import { cli, evalshaCalls, redisUrl, unique } from './support.mjs';

const url = redisUrl();
/** @type {RedisStore} */
let store;

before(async () => {
  store = await RedisStore.connect(url);
});
after(() => store.close());

// 3 at once, then one a second.
const GCRA = Object.freeze({ algorithm: 'gcra', maxBurst: 2, countPerPeriod: 1, periodMs: 1000 });

/** `promise` rejects with the argument error `check` expects. */
async function rejects(promise, kind, argument, value, hasValue) {
  let error;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  assert.ok(error, 'expected a rejection');
  check(error, kind, argument, value, hasValue);
}

test('a store connects and says what it is', () => {
  assert.equal(store.cluster, false);
  assert.equal(store.timeoutMs, 100);
  assert.equal(store.retryIntervalMs, 200);
  assert.equal(store.isDown, false);
  assert.equal(store.closed, false);
  assert.equal(Object.prototype.toString.call(store), '[object RedisStore]');
});

test('GCRA: the burst, then refusals with retry-after, as CL.THROTTLE replies', async () => {
  const limiter = new RedisLimiter(store, unique('gcra'), GCRA);
  assert.equal(limiter.limit, 3);
  const decisions = [];
  for (let i = 0; i < 4; i++) decisions.push(await limiter.check('user:1'));
  assert.ok(decisions.every((d) => d instanceof Decision));
  assert.deepEqual(
    decisions.map((d) => [d.allowed, d.limit, d.remaining]),
    [
      [true, 3, 2],
      [true, 3, 1],
      [true, 3, 0],
      [false, 3, 0],
    ],
  );
  const refused = decisions[3];
  // The server's clock moved a little between the calls.
  assert.ok(refused.retryAfterMs > 900 && refused.retryAfterMs <= 1000, `${refused.retryAfterMs}`);
  assert.ok(refused.resetAfterMs > 2900 && refused.resetAfterMs <= 3000, `${refused.resetAfterMs}`);
  // Another key has a limit of its own.
  assert.equal((await limiter.check('user:2')).remaining, 2);
});

test('cost: several units at once; a cost beyond the limit is refused for ever; peek consumes nothing', async () => {
  const limiter = new RedisLimiter(store, unique('cost'), GCRA);
  const impossible = await limiter.check('k', 4);
  assert.equal(impossible.allowed, false);
  assert.equal(impossible.retryAfterMs, Infinity);
  assert.equal(impossible.remaining, 3); // nothing consumed
  const peeked = await limiter.peek('k', 3);
  assert.equal(peeked.allowed, true);
  assert.equal(peeked.remaining, 0);
  assert.equal((await limiter.check('k', 3n)).allowed, true);
  const after = await limiter.peek('k');
  assert.equal(after.allowed, false);
  assert.equal((await limiter.check('k')).allowed, false);
});

test('every algorithm that runs in Redis decides its burst', async () => {
  const limits = [
    { algorithm: 'gcra', maxBurst: 1, countPerPeriod: 1, periodMs: 60_000 },
    { algorithm: 'tokenBucket', rate: 1, burst: 2 },
    { algorithm: 'fixedWindow', limit: 2, windowMs: 1e9 },
    { algorithm: 'slidingWindowCounter', limit: 2, windowMs: 1e9 },
    { algorithm: 'slidingLog', limit: 2, windowMs: 1e9 },
  ];
  for (const limit of limits) {
    const limiter = new RedisLimiter(store, unique(limit.algorithm), limit);
    const allowed = [];
    for (let i = 0; i < 3; i++) allowed.push((await limiter.check('k')).allowed);
    assert.deepEqual(allowed, [true, true, false], limit.algorithm);
    assert.equal(limiter.limit, 2, limit.algorithm);
  }
});

test('an algorithm that does not run in Redis: ERR_RATEKEEPER_REDIS_UNSUPPORTED', () => {
  for (const limit of [
    { algorithm: 'leakyBucketQueue', capacity: 2, intervalMs: 10 },
    { algorithm: 'leakyBucketMeter', capacity: 2, countPerPeriod: 1, periodMs: 10 },
    { algorithm: 'slidingWindow', limit: 5, windowMs: 1000, subWindows: 10 },
  ]) {
    assert.throws(
      () => new RedisLimiter(store, unique('unsupported'), limit),
      (e) => e instanceof Error && e.code === codes.redisUnsupported && /Redis/.test(e.message),
    );
  }
});

test('the same name through several stores (as from several processes) shares one limit', async () => {
  const name = unique('shared');
  const limit = { algorithm: 'fixedWindow', limit: 30, windowMs: 1e9 };
  const stores = await Promise.all([1, 2, 3].map(() => RedisStore.connect(url)));
  try {
    const limiters = stores.map((s) => new RedisLimiter(s, name, limit));
    // 3 × 20 decisions in flight at once, on one key.
    const decisions = await Promise.all(limiters.flatMap((l) => Array.from({ length: 20 }, () => l.check('k'))));
    assert.equal(decisions.filter((d) => d.allowed).length, 30);
    // Another name is another limit, even with the same key.
    assert.equal((await new RedisLimiter(stores[0], unique('other'), limit).check('k')).allowed, true);
  } finally {
    for (const s of stores) s.close();
  }
});

test('names and keys are escaped: no two (name, key) pairs share state', async () => {
  const base = unique('escape');
  const limit = { algorithm: 'fixedWindow', limit: 1, windowMs: 1e9 };
  const pairs = [
    [`${base}`, 'a:b'],
    [`${base}:a`, 'b'],
    [`${base}}`, 'x'],
    [`${base}`, '}x'],
    [`${base}{`, 'y'],
    [`${base}`, '{y'],
    [`${base}`, 'é'],
    [`${base}`, ''],
  ];
  for (const [name, key] of pairs) {
    const d = await new RedisLimiter(store, name, limit).check(key);
    assert.equal(d.allowed, true, `${name} / ${key}`);
  }
});

test('a refusal is remembered: the same key is refused without a round trip until its retry-after', async () => {
  const limit = { algorithm: 'gcra', maxBurst: 0, countPerPeriod: 1, periodMs: 60_000 };
  const remembering = new RedisLimiter(store, unique('remember'), limit);
  const forgetting = new RedisLimiter(store, unique('forget'), limit, { rememberRefusals: false });
  for (const l of [remembering, forgetting]) {
    assert.equal((await l.check('k')).allowed, true);
    assert.equal((await l.check('k')).allowed, false);
  }
  const before = evalshaCalls(url);
  for (let i = 0; i < 50; i++) {
    const d = await remembering.check('k');
    assert.equal(d.allowed, false);
    assert.ok(d.retryAfterMs > 0);
  }
  assert.equal(evalshaCalls(url) - before, 0, 'remembered refusals went to Redis');
  for (let i = 0; i < 50; i++) assert.equal((await forgetting.check('k')).allowed, false);
  // INFO itself is not a script; every forgotten refusal is one.
  assert.equal(evalshaCalls(url) - before, 50);
});

test('keys expire once their state is whole again (GCRA: a second after it was set, at least)', async () => {
  const name = unique('expire');
  const limiter = new RedisLimiter(store, name, { algorithm: 'gcra', maxBurst: 0, countPerPeriod: 1, periodMs: 200 });
  await limiter.check('k');
  const keys = () => cli(url, '--scan', '--pattern', `*${name.replaceAll(':', '*')}*`);
  assert.notEqual(keys(), '');
  // Whole after 200 ms; GCRA keeps a key at least a second (see gcra.lua).
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  assert.equal(keys(), '');
});

test('1,000 decisions in flight never block the event loop, and all settle', async () => {
  // A store of its own with a 5 s timeout: what this test measures is the
  // event loop, and on a loaded machine 1,000 scripts can take longer than
  // the shared store's 100 ms.
  const own = await RedisStore.connect(url, { timeoutMs: 5_000 });
  // A window of about 11.6 days: windows are aligned to multiples of their
  // length, and one ending mid-test would rightly admit again.
  const limiter = new RedisLimiter(own, unique('loop'), { algorithm: 'fixedWindow', limit: 600, windowMs: 1e9 });
  let ticks = 0;
  const interval = setInterval(() => ticks++, 1);
  const start = performance.now();
  const pending = Array.from({ length: 1000 }, (_, i) => limiter.check(`k${i % 2}`));
  const queueing = performance.now() - start;
  // Cleared even when a decision rejects: a live interval would keep the
  // test file's process, and the whole run, from ever ending.
  const decisions = await Promise.all(pending).finally(() => clearInterval(interval));
  assert.ok(queueing < 200, `queueing took ${queueing} ms`);
  // 500 per key, all admitted; per key, exactly 600 would be.
  assert.equal(decisions.filter((d) => d.allowed).length, 1000);
  const more = await Promise.all(Array.from({ length: 200 }, () => limiter.check('k0')));
  assert.equal(more.filter((d) => d.allowed).length, 100);
  // Timers fire while decisions are in flight — unless all of them settled
  // within one turn of the loop (batched, they can), which no blocked loop
  // would allow either.
  const inFlight = performance.now() - start;
  assert.ok(ticks > 0 || inFlight < 20, `no timer fired in ${inFlight} ms of decisions in flight`);
  own.close();
});

test('closing: a closed limiter rejects; closing the store closes its limiters', async () => {
  const own = await RedisStore.connect(url);
  const a = new RedisLimiter(own, unique('close-a'), GCRA);
  const b = new RedisLimiter(own, unique('close-b'), GCRA);
  assert.equal((await a.check('k')).allowed, true);
  a.close();
  a.close(); // twice is fine
  const closed = (e) => e instanceof Error && e.code === codes.closed && /closed/.test(e.message);
  await assert.rejects(a.check('k'), closed);
  await assert.rejects(a.peek('k'), closed);
  assert.equal((await b.check('k')).allowed, true);
  own.close();
  assert.equal(own.closed, true);
  await assert.rejects(b.check('k'), closed);
  assert.throws(() => own.isDown, closed);
  assert.throws(() => new RedisLimiter(own, unique('late'), GCRA), closed);
});

test('invalid arguments: the same RangeErrors and TypeErrors as local limiters; decisions reject, never throw', async () => {
  const name = unique('invalid');
  const t = (fn, kind, argument, value, hasValue) => {
    let error;
    try {
      fn();
    } catch (e) {
      error = e;
    }
    assert.ok(error, `expected ${argument} to throw`);
    check(error, kind, argument, value, hasValue);
  };
  t(() => new RedisLimiter({}, name, GCRA), TYPE, 'store', undefined, false);
  t(() => new RedisLimiter(new KeyedLimiter(GCRA, { maxKeys: 1 }), name, GCRA), TYPE, 'store', undefined, false);
  t(() => new RedisLimiter(store, 5, GCRA), TYPE, 'name', 5);
  t(() => new RedisLimiter(store, name, 'gcra'), TYPE, 'limit', 'gcra');
  t(() => new RedisLimiter(store, name, { ...GCRA, maxBurst: -1 }), RANGE, 'maxBurst', -1);
  t(() => new RedisLimiter(store, name, { ...GCRA, periodMs: 0 }), RANGE, 'periodMs', 0);
  t(() => new RedisLimiter(store, name, { ...GCRA, clock: new ManualClock() }), OPTION, 'options');
  t(() => new RedisLimiter(store, name, GCRA, { rememberRefusals: 1 }), TYPE, 'rememberRefusals', 1);
  t(() => new RedisLimiter(store, name, GCRA, { whenUnavailable: 'maybe' }), RANGE, 'whenUnavailable', 'maybe');
  t(() => new RedisLimiter(store, name, GCRA, { whenUnavailable: 1 }), TYPE, 'whenUnavailable', 1);
  t(() => new RedisLimiter(store, name, GCRA, { whenunavailable: 'failOpen' }), OPTION, 'options');
  t(() => new RedisLimiter(store, name, GCRA, { whenUnavailable: 'localShare' }), OPTION, 'options');
  t(() => new RedisLimiter(store, name, GCRA, { maxKeys: 10 }), OPTION, 'options');
  t(
    () => new RedisLimiter(store, name, GCRA, { whenUnavailable: 'localShare', membership: {}, maxKeys: 10 }),
    TYPE,
    'membership',
    undefined,
    false,
  );

  const limiter = new RedisLimiter(store, name, GCRA);
  for (const call of ['check', 'peek']) {
    await rejects(limiter[call](5), TYPE, 'key', 5);
    await rejects(limiter[call](new Uint16Array(1)), TYPE, 'key', undefined, false);
    await rejects(limiter[call]('k'.repeat(257)), RANGE, 'key', 257);
    await rejects(limiter[call](), TYPE, 'key', undefined);
    await rejects(limiter[call]('k', -1), RANGE, 'cost', -1);
    await rejects(limiter[call]('k', 0.5), RANGE, 'cost', 0.5);
    await rejects(limiter[call]('k', '1'), TYPE, 'cost', '1');
  }
  // Nothing was consumed by the failed calls.
  assert.equal((await limiter.check('k')).remaining, 2);

  await rejects(RedisStore.connect(5), TYPE, 'url', 5);
  await rejects(RedisStore.connect('http://127.0.0.1/'), RANGE, 'url', 'http://127.0.0.1/');
  await rejects(RedisStore.connect(url, { timeoutMs: 0 }), RANGE, 'timeoutMs', 0);
  await rejects(RedisStore.connect(url, { timeoutMs: Infinity }), RANGE, 'timeoutMs', Infinity);
  await rejects(RedisStore.connect(url, { retryIntervalMs: -1 }), RANGE, 'retryIntervalMs', -1);
  await rejects(RedisStore.connect(url, { connectTimeoutMicros: 0n }), RANGE, 'connectTimeoutMicros', 0n);
  await rejects(RedisStore.connect(url, { timeoutMs: '1' }), TYPE, 'timeoutMs', '1');
  await rejects(RedisStore.connect(url, { timeout: 1 }), OPTION, 'options');
  await rejects(RedisStore.connectCluster([]), TYPE, 'urls', undefined, false);
  await rejects(RedisStore.connectCluster(url), TYPE, 'urls', url);
  await rejects(RedisStore.connectCluster(['nope://x']), RANGE, 'urls', 'nope://x');
  assert.throws(() => new RedisStore(), (e) => e instanceof TypeError);
});

test("a store's options are at most an hour, as in every language, refused under their own names", async () => {
  const HOUR_ABOVE_0 = 'must be above 0 and at most an hour (1 to 3600000000 microseconds)';
  const refusals = [
    [{ timeoutMs: 3_600_001 }, 'timeoutMs', 3_600_001, HOUR_ABOVE_0],
    [{ timeoutMicros: 3_600_000_001n }, 'timeoutMicros', 3_600_000_001n, HOUR_ABOVE_0],
    [{ connectTimeoutMs: 3_600_000.5 }, 'connectTimeoutMs', 3_600_000.5, HOUR_ABOVE_0],
    [{ retryIntervalMs: 2 ** 32 }, 'retryIntervalMs', 2 ** 32, 'must be between 0 and an hour (0 to 3600000000 microseconds)'],
  ];
  for (const [options, argument, value, requirement] of refusals) {
    let error;
    try {
      await RedisStore.connect(url, options);
    } catch (e) {
      error = e;
    }
    check(error, RANGE, argument, value);
    assert.ok(error.message.endsWith(`: ${requirement}`), error.message);
    // Refused before connecting: nothing listens on port 1.
    await assert.rejects(RedisStore.connect('redis://127.0.0.1:1/', options), (e) => e.argument === argument);
  }
  const widest = await RedisStore.connect(url, { timeoutMs: 3_600_000, retryIntervalMicros: 3_600_000_000n });
  assert.equal(widest.timeoutMs, 3_600_000);
  assert.equal(widest.retryIntervalMs, 3_600_000);
  widest.close();
});

test('a store that cannot connect rejects with ERR_RATEKEEPER_REDIS_UNAVAILABLE', async () => {
  // Port 1: nothing listens there.
  await assert.rejects(
    RedisStore.connect('redis://127.0.0.1:1/'),
    (e) => e instanceof Error && e.code === codes.redisUnavailable && /ratekeeper/.test(e.message),
  );
});

test('an idle store does not keep the process alive; one with decisions in flight ends cleanly on exit', () => {
  const pkg = fileURLToPath(new URL('../../index.js', import.meta.url));
  const run = (source) =>
    spawnSync(process.execPath, ['-e', source], {
      encoding: 'utf8',
      timeout: 20_000,
      env: { ...process.env, RATEKEEPER_PKG: pkg },
    });
  // Connected, decided, never closed: the process ends when its work does.
  const idle = run(`
    const { RedisStore, RedisLimiter } = require(process.env.RATEKEEPER_PKG);
    (async () => {
      const store = await RedisStore.connect(process.env.RATEKEEPER_REDIS_URL);
      const l = new RedisLimiter(store, 'node-test:idle:' + process.pid, { algorithm: 'fixedWindow', limit: 5, windowMs: 1000 });
      console.log((await l.check('k')).allowed);
    })();
  `);
  assert.equal(idle.error, undefined, String(idle.error));
  assert.equal(idle.stderr, '');
  assert.equal(idle.status, 0);
  assert.equal(idle.stdout.trim(), 'true');

  // 5,000 decisions in flight when the process exits: no crash, no output.
  const busy = run(`
    const { RedisStore, RedisLimiter } = require(process.env.RATEKEEPER_PKG);
    (async () => {
      const store = await RedisStore.connect(process.env.RATEKEEPER_REDIS_URL);
      const l = new RedisLimiter(store, 'node-test:busy:' + process.pid, { algorithm: 'fixedWindow', limit: 1e9, windowMs: 1000 });
      let settled = 0;
      for (let i = 0; i < 5000; i++) l.check('k' + (i % 7)).then(() => settled++);
      console.log('pending');
      process.exit(0);
    })();
  `);
  assert.equal(busy.error, undefined, String(busy.error));
  assert.equal(busy.signal, null);
  assert.equal(busy.stderr, '');
  assert.equal(busy.status, 0);
  assert.equal(busy.stdout.trim(), 'pending');
});

test('worker threads decide through Redis on their own, and one terminated with decisions in flight ends cleanly', async () => {
  const pkg = fileURLToPath(new URL('../../index.js', import.meta.url));
  const name = unique('workers');
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { RedisStore, RedisLimiter } = require(workerData.pkg);
    (async () => {
      const store = await RedisStore.connect(workerData.url);
      const l = new RedisLimiter(store, workerData.name, { algorithm: 'fixedWindow', limit: 100, windowMs: 1e9 });
      if (workerData.abandon) {
        for (let i = 0; i < 5000; i++) l.check('flood' + i).catch(() => {});
        parentPort.postMessage('flooding');
        return;
      }
      const ds = await Promise.all(Array.from({ length: 40 }, () => l.check('k')));
      parentPort.postMessage(ds.filter((d) => d.allowed).length);
      store.close();
    })();
  `;
  const start = (data) => {
    const worker = new Worker(source, { eval: true, workerData: { pkg, url, name, ...data } });
    const message = new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    return { worker, message };
  };
  // Four threads, one limit of 100 on one key: 160 asked, 100 admitted.
  const counts = await Promise.all([0, 1, 2, 3].map(() => start({}).message));
  assert.equal(counts.reduce((a, b) => a + b, 0), 100);
  // Terminated while its answers are on their way back.
  const { worker, message } = start({ abandon: true });
  assert.equal(await message, 'flooding');
  assert.equal(await worker.terminate(), 1);
  // This thread's limiters go on.
  assert.equal((await new RedisLimiter(store, unique('after-workers'), GCRA).check('k')).allowed, true);
});
