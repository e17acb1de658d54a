// Thousands of acquires pending at once: they all settle, with Guava's
// waits; and a process (or a worker thread) that stops while they wait
// ends cleanly — no crash, no hang, no error output.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';

import { RateLimiter } from '../index.mjs';

const pkg = new URL('../index.js', import.meta.url).pathname;
const PENDING = 5_000;

test(`${PENDING.toLocaleString('en')} pending acquires all settle, with Guava's waits`, async () => {
  // A permit every 200 µs, none saved up: permit i is due 200 µs × i after
  // the first (unless calls fell behind), so its wait is that less the
  // time since the first call.
  const INTERVAL_MS = 0.2;
  const limiter = RateLimiter.create(1e3 / INTERVAL_MS, { maxBurstSeconds: 0 });
  const calledAt = [];
  const returnedAt = [];
  const resolvedAt = [];
  const order = [];
  const pending = [];
  for (let i = 0; i < PENDING; i++) {
    calledAt.push(performance.now());
    pending.push(
      limiter.acquire().then((seconds) => {
        resolvedAt[i] = performance.now();
        order.push(i);
        return seconds;
      }),
    );
    returnedAt.push(performance.now());
  }
  const waits = await Promise.all(pending);
  assert.equal(waits.length, PENDING);
  assert.equal(waits[0], 0);
  // Guava's schedule with no burst: permit i is granted at the later of
  // its call and one interval after the previous grant. The limiter read
  // its clock somewhere between `calledAt` and `returnedAt` (a garbage
  // collection may fall in between), so both the grant (that time plus
  // the wait) and the schedule are known within bounds, which must meet
  // (give or take a little: the limiter's clock and performance.now() are
  // two clocks).
  const TOLERANCE_MS = 0.5;
  let early = -Infinity;
  let late = -Infinity;
  for (let i = 0; i < PENDING; i++) {
    early = Math.max(calledAt[i], early + INTERVAL_MS);
    late = Math.max(returnedAt[i], late + INTERVAL_MS);
    const wait = waits[i] * 1e3;
    const at = (t) => (t - calledAt[0]).toFixed(3);
    assert.ok(
      calledAt[i] + wait < late + TOLERANCE_MS && returnedAt[i] + wait > early - TOLERANCE_MS,
      `permit ${i}: granted between ${at(calledAt[i] + wait)} and ${at(returnedAt[i] + wait)} ms, ` +
        `due between ${at(early)} and ${at(late)} ms`,
    );
    // Never resolved before its wait was over.
    assert.ok(resolvedAt[i] - calledAt[i] >= waits[i] * 1e3 - 0.01, `permit ${i} resolved early`);
  }
  // Thousands were waiting at once when the last call returned.
  const queued = returnedAt[PENDING - 1];
  const waiting = waits.filter((w, i) => calledAt[i] + w * 1e3 > queued).length;
  assert.ok(waiting >= 1000, `${waiting} waiting at once`);
  assert.equal(new Set(order).size, PENDING); // each settled once
  // The limiter is consistent afterwards.
  assert.equal(await limiter.tryAcquire(1, { timeoutMs: 1000 }), true);
});

/** Runs `source` as an ES module in a child Node process. */
function runChild(source) {
  const started = performance.now();
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', source], {
    encoding: 'utf8',
    timeout: 30_000,
    env: { ...process.env, RATEKEEPER_PKG: pkg },
  });
  return { ...child, ms: performance.now() - started };
}

test(`a process that exits with ${PENDING.toLocaleString('en')} acquires pending ends cleanly`, () => {
  // One permit a second: the last acquire would wait 83 minutes.
  const child = runChild(`
    const { createRequire } = await import('node:module');
    const { RateLimiter, TokenBucket } = createRequire(import.meta.url)(process.env.RATEKEEPER_PKG);
    const limiter = RateLimiter.create(1);
    const bucket = new TokenBucket({ rate: 1, burst: 1 });
    const pending = [];
    for (let i = 0; i < ${PENDING}; i++) pending.push(limiter.acquire(), limiter.tryAcquire(1, { timeoutMs: 1e9 }), bucket.wait(1, { timeoutMs: 1e9 }));
    let settled = 0;
    for (const p of pending) p.then(() => settled++);
    setTimeout(() => {
      console.log('settled ' + settled);
      process.exit(0);
    }, 50);
  `);
  assert.equal(child.error, undefined, String(child.error));
  assert.equal(child.signal, null);
  assert.equal(child.stderr, '');
  assert.equal(child.status, 0);
  // The first acquire and the bucket's first wait are granted at once;
  // every other call is still waiting.
  assert.equal(child.stdout.trim(), 'settled 2');
  assert.ok(child.ms < 20_000, `${child.ms} ms`);
});

test(`a worker terminated with ${PENDING.toLocaleString('en')} acquires pending ends cleanly`, async () => {
  const worker = new Worker(
    `
    const { parentPort, workerData } = require('node:worker_threads');
    const { RateLimiter } = require(workerData.pkg);
    const limiter = RateLimiter.create(1);
    for (let i = 0; i < workerData.n; i++) limiter.acquire();
    parentPort.postMessage('waiting');
    `,
    { eval: true, workerData: { pkg, n: PENDING } },
  );
  const errors = [];
  worker.on('error', (e) => errors.push(e));
  await new Promise((resolve) => worker.once('message', resolve));
  const code = await worker.terminate();
  assert.equal(code, 1); // terminated, as Node reports it
  assert.deepEqual(errors, []);
  // This thread goes on deciding.
  assert.equal(RateLimiter.create(1).tryAcquire(), true);
});
