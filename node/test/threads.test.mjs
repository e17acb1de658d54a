// Worker threads: each loads the native module into its own environment
// and decides on its own limiters, at the same time as the others; each
// limiter's decisions come back through its own memory, so no thread sees
// another's. (A limiter belongs to the thread that made it: JavaScript
// objects cannot cross threads.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { FixedWindow, Gcra, ManualClock } = require(workerData.pkg);
const clock = new ManualClock();
// Remaining counts down by the cost of each check: a decision read from
// anywhere else would break the sequence.
const window = new FixedWindow({ limit: 1e15, windowMs: 1000, clock });
const gcra = new Gcra({ maxBurst: 1e12, countPerPeriod: 1, periodMs: 1, clock });
let expected = 1e15, bad = 0;
for (let i = 0; i < workerData.n; i++) {
  const cost = 1 + (i % 3) + workerData.id;
  expected -= cost;
  if (window.check(cost).remaining !== expected) bad++;
  if (!gcra.tryAcquire()) bad++;
}
parentPort.postMessage({ bad, last: window.peek(0).remaining, expected });
`;

test('limiters in several threads decide at the same time without crossing', async () => {
  const pkg = new URL('../index.js', import.meta.url).pathname;
  const n = 200_000;
  const results = await Promise.all(
    [0, 1, 2, 3].map(
      (id) =>
        new Promise((resolve, reject) => {
          const worker = new Worker(WORKER, { eval: true, workerData: { pkg, n, id } });
          worker.once('message', resolve);
          worker.once('error', reject);
        }),
    ),
  );
  for (const r of results) {
    assert.equal(r.bad, 0);
    assert.equal(r.last, r.expected);
  }
});
