// KeyedLimiter: one limiter per key, on a ManualClock; strings and bytes as
// keys; the bound on keys held and both policies at it; invalid arguments;
// and worker threads deciding on limiters of their own at the same time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';

import { Gcra, KeyedLimiter, ManualClock, codes } from '../index.mjs';
import { OPTION, RANGE, TYPE, throws } from './expect-error.mjs';

// 3 at once, then one a second.
const GCRA = Object.freeze({ algorithm: 'gcra', maxBurst: 2, countPerPeriod: 1, periodMs: 1000 });

test('each key is decided as a limiter of its own would be', () => {
  const clock = new ManualClock();
  const keyed = new KeyedLimiter(GCRA, { maxKeys: 100, clock });
  const alone = new Gcra({ maxBurst: 2, countPerPeriod: 1, periodMs: 1000, clock });
  const steps = [0, 0, 0, 0, 400, 600, 0, 1000, 250, 3000, 0, 0, 0, 0];
  for (const ms of steps) {
    clock.advance(ms);
    const expected = alone.check();
    assert.deepEqual({ ...keyed.check('user:1') }, { ...expected });
  }
  // Another key starts full, whatever the first one did.
  clock.advance(0);
  const d = keyed.check('user:2');
  assert.equal(d.allowed, true);
  assert.equal(d.remaining, 2);
  assert.equal(d.limit, 3);
  assert.equal(keyed.size, 2);
  assert.equal(keyed.algorithm, 'gcra');
});

test('check admits the burst, then refuses with the retry-after, consuming nothing', () => {
  const clock = new ManualClock();
  const keyed = new KeyedLimiter(GCRA, { maxKeys: 10, clock });
  assert.deepEqual([1, 2, 3].map(() => keyed.check('k').remaining), [2, 1, 0]);
  const refused = keyed.check('k');
  assert.equal(refused.allowed, false);
  assert.equal(refused.retryAfterMs, 1000);
  // peek tells the same without consuming; a refusal consumed nothing.
  clock.advance(999);
  assert.equal(keyed.peek('k').allowed, false);
  clock.advance(1);
  assert.equal(keyed.peek('k').allowed, true);
  assert.equal(keyed.peek('k').allowed, true);
  assert.equal(keyed.tryAcquire('k'), true);
  assert.equal(keyed.tryAcquire('k'), false);
  // A cost: 3 at once is the whole burst; 4 never fits.
  clock.advance(3000);
  assert.equal(keyed.check('k', 4).allowed, false);
  assert.equal(keyed.check('k', 3n).allowed, true);
  // Cost 0 looks without taking anything: allowed, nothing left.
  const look = keyed.check('k', 0);
  assert.equal(look.allowed, true);
  assert.equal(look.remaining, 0);
  assert.equal(keyed.check('k').allowed, false);
});

test('a string key is its UTF-8 bytes: the same key as the Buffer or Uint8Array of them', () => {
  const clock = new ManualClock();
  const keyed = new KeyedLimiter(GCRA, { maxKeys: 10, clock });
  keyed.check('é');
  keyed.check(Buffer.from('é'));
  keyed.check(new Uint8Array([0xc3, 0xa9]));
  assert.equal(keyed.check('é').allowed, false);
  assert.equal(keyed.size, 1);
  // Other bytes, another key; the empty key is a key.
  assert.equal(keyed.check(Buffer.from('e')).remaining, 2);
  assert.equal(keyed.check('').remaining, 2);
  assert.equal(keyed.check(new Uint8Array(0)).remaining, 1);
  assert.equal(keyed.size, 3);
});

test('long keys (read past the native stack buffer) are whole keys', () => {
  const clock = new ManualClock();
  const keyed = new KeyedLimiter(GCRA, { maxKeys: 100, maxKeyBytes: 65_536, clock });
  // Around the 252-byte boundary, with 1-, 2- and 4-byte characters, and far past it.
  const keys = [];
  for (const unit of ['a', 'é', '😀']) {
    for (let bytes = 240; bytes <= 264; bytes++) {
      const n = Math.floor(bytes / Buffer.byteLength(unit));
      keys.push(unit.repeat(n));
    }
  }
  keys.push('x'.repeat(10_000), `${'x'.repeat(10_000)}y`);
  const distinct = [...new Set(keys)];
  for (const key of distinct) assert.equal(keyed.check(key).remaining, 2, `${key.length} chars`);
  assert.equal(keyed.size, distinct.length);
  // Each long string is the same key as its bytes.
  for (const key of distinct) assert.equal(keyed.check(Buffer.from(key)).remaining, 1, `${key.length} chars`);
  assert.equal(keyed.size, distinct.length);
});

test('keys longer than maxKeyBytes (256 by default) throw a RangeError naming key, storing nothing', () => {
  const clock = new ManualClock();
  const keyed = new KeyedLimiter(GCRA, { maxKeys: 10, clock });
  assert.equal(keyed.maxKeyBytes, 256);
  for (const call of ['check', 'tryAcquire', 'tryCheck', 'peek', 'tryPeek', 'remove']) {
    throws(() => keyed[call]('k'.repeat(257)), RANGE, 'key', 257);
    throws(() => keyed[call]('é'.repeat(129)), RANGE, 'key', 258);
    throws(() => keyed[call](Buffer.alloc(10_000_000)), RANGE, 'key', 10_000_000);
  }
  assert.equal(keyed.size, 0);
  assert.equal(keyed.check('k'.repeat(256)).allowed, true);
  assert.equal(keyed.check(Buffer.alloc(256)).allowed, true);
  const narrow = new KeyedLimiter(GCRA, { maxKeys: 10, maxKeyBytes: 4n, clock });
  assert.equal(narrow.maxKeyBytes, 4);
  assert.equal(narrow.check('éé').allowed, true);
  throws(() => narrow.check('abcde'), RANGE, 'key', 5);
  assert.ok(narrow.maxBytes > 0 && narrow.maxBytes < keyed.maxBytes, `${narrow.maxBytes} vs ${keyed.maxBytes}`);
  throws(() => new KeyedLimiter(GCRA, { maxKeys: 5, maxKeyBytes: 0 }), RANGE, 'maxKeyBytes', 0);
  throws(() => new KeyedLimiter(GCRA, { maxKeys: 5, maxKeyBytes: 65_537 }), RANGE, 'maxKeyBytes', 65_537);
  throws(() => new KeyedLimiter(GCRA, { maxKeys: 5, maxKeyBytes: 1.5 }), RANGE, 'maxKeyBytes', 1.5);
  throws(() => new KeyedLimiter(GCRA, { maxKeys: 5, maxKeyBytes: '256' }), TYPE, 'maxKeyBytes', '256');
});

test('a string with a lone surrogate has no UTF-8: a RangeError naming key, never U+FFFD', () => {
  const keyed = new KeyedLimiter(GCRA, { maxKeys: 10, clock: new ManualClock() });
  for (const call of ['check', 'tryAcquire', 'tryCheck', 'peek', 'tryPeek', 'remove']) {
    throws(() => keyed[call]('\ud800'), RANGE, 'key', 0);
    throws(() => keyed[call]('ab\udfff'), RANGE, 'key', 2);
    throws(() => keyed[call]('😀\udc80'), RANGE, 'key', 2);
    // Past the native stack buffer too.
    throws(() => keyed[call](`${'x'.repeat(300)}\ud800`), RANGE, 'key', 300);
  }
  assert.equal(keyed.size, 0);
  // A real U+FFFD and whole surrogate pairs are text like any other.
  assert.equal(keyed.check('\ufffd').remaining, 2);
  assert.equal(keyed.check('\ud83d\ude00').remaining, 2);
  assert.equal(keyed.check('😀').remaining, 1);
  assert.equal(keyed.size, 2);
});

test('a string key is its UTF-8, whether it fits the native stack buffer or not', () => {
  const keyed = new KeyedLimiter(GCRA, { maxKeys: 100, maxKeyBytes: 1024, clock: new ManualClock() });
  // Around the buffer's 255 code units: ASCII, and ending in a character of two bytes.
  for (const n of [253, 254, 255, 256, 300]) {
    for (const key of ['k'.repeat(n), `${'k'.repeat(n - 1)}é`]) {
      assert.equal(keyed.check(key).remaining, 2, `${n}: ${key.at(-1)}`);
      assert.equal(keyed.check(Buffer.from(key)).remaining, 1, `${n}: ${key.at(-1)}`);
    }
  }
  assert.equal(keyed.size, 10);
});

test('remove forgets a key; evictFull drops the full ones, which changes nothing', () => {
  const clock = new ManualClock();
  const keyed = new KeyedLimiter(GCRA, { maxKeys: 10, clock });
  for (let i = 0; i < 3; i++) keyed.check('a');
  keyed.check('b');
  assert.equal(keyed.check('a').allowed, false);
  assert.equal(keyed.remove('a'), true);
  assert.equal(keyed.remove('a'), false);
  assert.equal(keyed.check('a').remaining, 2); // afresh
  clock.advance(1000); // 'b' (one used) is full again; 'a' (one used, 1 s ago) too
  assert.equal(keyed.evictFull(), 2);
  assert.equal(keyed.size, 0);
  assert.equal(keyed.check('b').remaining, 2);
});

test('refuseNewKeys: at the bound a new key is refused, held keys decide as always', () => {
  const clock = new ManualClock();
  const keyed = new KeyedLimiter(GCRA, { maxKeys: 2, clock });
  assert.equal(keyed.whenFull, 'refuseNewKeys');
  assert.equal(keyed.maxKeys, 2);
  keyed.check('a');
  keyed.check('b');
  const refused = keyed.check('c');
  assert.equal(refused.allowed, false);
  assert.equal(refused.remaining, 0);
  assert.equal(refused.retryAfterMs, 1000); // when 'a' is full again
  assert.equal(keyed.size, 2);
  assert.equal(keyed.refusedNewKeys, 1);
  assert.equal(keyed.check('a').allowed, true);

  // tryCheck and tryPeek say why, with the refusal check would have made.
  for (const call of [() => keyed.tryCheck('c'), () => keyed.tryPeek('c')]) {
    let error;
    try {
      call();
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof Error);
    assert.equal(error.code, codes.atCapacity);
    assert.equal(error.code, 'ERR_RATEKEEPER_AT_CAPACITY');
    assert.match(error.message, /capacity/);
    assert.equal(error.decision.allowed, false);
    assert.ok(error.decision.retryAfterMs > 0);
  }
  assert.equal(keyed.tryCheck('b').allowed, true); // held: no error
  // Once a key is full it makes room.
  clock.advance(2000);
  assert.equal(keyed.tryCheck('c').allowed, true);
  assert.ok(keyed.size <= 2);
  assert.equal(keyed.forcedEvictions, 0);
});

test('evictSoonestFull: at the bound a new key is admitted, a held one forgotten and counted', () => {
  const clock = new ManualClock();
  const keyed = new KeyedLimiter(GCRA, { maxKeys: 2, whenFull: 'evictSoonestFull', clock });
  assert.equal(keyed.whenFull, 'evictSoonestFull');
  for (let i = 0; i < 3; i++) keyed.check('a'); // a: all used
  keyed.check('b'); // b: one used — the soonest full
  const d = keyed.check('c');
  assert.equal(d.allowed, true);
  assert.equal(keyed.size, 2);
  assert.equal(keyed.forcedEvictions, 1);
  assert.equal(keyed.refusedNewKeys, 0);
  // 'b' was forgotten ('a' is still refused): it comes back afresh.
  assert.equal(keyed.check('a').allowed, false);
  assert.equal(keyed.check('b').remaining, 2);
  assert.equal(keyed.size, 2);
});

test('a flood of unique keys never holds more than maxKeys', () => {
  const clock = new ManualClock();
  for (const whenFull of ['refuseNewKeys', 'evictSoonestFull']) {
    const keyed = new KeyedLimiter(GCRA, { maxKeys: 1000, whenFull, clock });
    for (let i = 0; i < 50_000; i++) {
      keyed.tryAcquire(`flood:${i}`);
      if (i % 5000 === 0) assert.ok(keyed.size <= 1000, `${whenFull}: ${keyed.size}`);
    }
    assert.ok(keyed.size <= 1000 && keyed.size > 0, `${whenFull}: ${keyed.size}`);
  }
});

test('every algorithm of the package works per key', () => {
  const clock = new ManualClock();
  const limits = [
    { algorithm: 'tokenBucket', rate: 1, burst: 2 },
    { algorithm: 'fixedWindow', limit: 2, windowMs: 1000 },
    { algorithm: 'slidingWindowCounter', limit: 2, windowMs: 1000 },
    { algorithm: 'slidingLog', limit: 2, windowMs: 1000 },
    { algorithm: 'gcra', maxBurst: 1, countPerPeriod: 1, periodMs: 500 },
  ];
  for (const limit of limits) {
    const keyed = new KeyedLimiter(limit, { maxKeys: 4, clock });
    assert.equal(keyed.algorithm, limit.algorithm);
    assert.deepEqual([1, 2, 3].map(() => keyed.tryAcquire('k')), [true, true, false], limit.algorithm);
    assert.equal(keyed.tryAcquire('other'), true, limit.algorithm);
  }
});

test('invalid arguments: typed errors naming the argument and the value', () => {
  throws(() => new KeyedLimiter(GCRA, { maxKeys: 0 }), RANGE, 'maxKeys', 0);
  throws(() => new KeyedLimiter(GCRA, { maxKeys: 2 ** 41 }), RANGE, 'maxKeys', 2 ** 41);
  throws(() => new KeyedLimiter(GCRA, { maxKeys: 1.5 }), RANGE, 'maxKeys', 1.5);
  throws(() => new KeyedLimiter(GCRA, { maxKeys: -1n }), RANGE, 'maxKeys', -1n);
  throws(() => new KeyedLimiter(GCRA, { maxKeys: '5' }), TYPE, 'maxKeys', '5');
  throws(() => new KeyedLimiter(GCRA, {}), TYPE, 'maxKeys', undefined, false);
  throws(() => new KeyedLimiter(GCRA, { maxKeys: 5, whenFull: 'lru' }), RANGE, 'whenFull', 'lru');
  throws(() => new KeyedLimiter(GCRA, { maxKeys: 5, whenFull: 1 }), TYPE, 'whenFull', 1);
  throws(() => new KeyedLimiter(GCRA, { maxKeys: 5, maxkeys: 5 }), OPTION, 'options');
  throws(() => new KeyedLimiter(GCRA, { maxKeys: 5, clock: {} }), TYPE, 'clock', undefined, false);
  throws(() => new KeyedLimiter('gcra', { maxKeys: 5 }), TYPE, 'limit', 'gcra');
  throws(() => new KeyedLimiter({ ...GCRA, maxBurst: -1 }, { maxKeys: 5 }), RANGE, 'maxBurst', -1);
  throws(() => new KeyedLimiter({ ...GCRA, algorithm: 'nope' }, { maxKeys: 5 }), RANGE, 'algorithm', 'nope');

  const keyed = new KeyedLimiter(GCRA, { maxKeys: 5 });
  for (const call of ['check', 'tryAcquire', 'tryCheck', 'peek', 'tryPeek', 'remove']) {
    throws(() => keyed[call](5), TYPE, 'key', 5);
    throws(() => keyed[call](null), TYPE, 'key', null);
    throws(() => keyed[call]({}), TYPE, 'key', undefined, false);
    throws(() => keyed[call](new Uint16Array(2)), TYPE, 'key', undefined, false);
    throws(() => keyed[call](), TYPE, 'key', undefined);
  }
  for (const call of ['check', 'tryAcquire', 'tryCheck', 'peek', 'tryPeek']) {
    throws(() => keyed[call]('k', -1), RANGE, 'cost', -1);
    throws(() => keyed[call]('k', 1.5), RANGE, 'cost', 1.5);
    throws(() => keyed[call]('k', '1'), TYPE, 'cost', '1');
  }
  // Nothing was created by the failed calls.
  assert.equal(keyed.size, 0);
});

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { KeyedLimiter, ManualClock } = require(workerData.pkg);
const clock = new ManualClock();
// Per key, 10 at once and none refilled (the clock never moves): exactly 10
// admitted per key, whatever else runs at the same time.
const keyed = new KeyedLimiter({ algorithm: 'fixedWindow', limit: 10, windowMs: 1000 }, { maxKeys: 1000, clock });
let admitted = 0;
for (let i = 0; i < workerData.n; i++) {
  const key = i % 2 ? 'k' + (i % 500) : Buffer.from('k' + (i % 500));
  if (keyed.tryAcquire(key)) admitted++;
}
parentPort.postMessage({ admitted, size: keyed.size });
`;

test('keyed limiters in several threads decide at the same time, each on its own keys', async () => {
  const pkg = new URL('../index.js', import.meta.url).pathname;
  const results = await Promise.all(
    [0, 1, 2, 3].map(
      () =>
        new Promise((resolve, reject) => {
          const worker = new Worker(WORKER, { eval: true, workerData: { pkg, n: 100_000 } });
          worker.once('message', resolve);
          worker.once('error', reject);
        }),
    ),
  );
  for (const r of results) assert.deepEqual(r, { admitted: 5000, size: 500 });
});

test('decisions interleaved with the event loop: exactly the limit admitted per key', async () => {
  const clock = new ManualClock();
  const keyed = new KeyedLimiter({ algorithm: 'fixedWindow', limit: 7, windowMs: 1000 }, { maxKeys: 100, clock });
  let admitted = 0;
  await Promise.all(
    Array.from({ length: 50 }, async (_, task) => {
      for (let i = 0; i < 20; i++) {
        await new Promise((resolve) => setImmediate(resolve));
        if (keyed.check(`key:${(task + i) % 10}`).allowed) admitted++;
      }
    }),
  );
  assert.equal(admitted, 70);
  assert.equal(keyed.size, 10);
});
