// Guava's documented scenario, as the demo runs it in every language: a
// limiter of 1 permit per second asked for 1, 2, 3, 4 and 5 permits, on a
// ManualClock the program moves in step with real time: `acquire` resolves
// at once with the wait (moving the manual clock by it), then the program
// waits that long for real, on a timer. Prints `acquire(N) waited W slept
// S` per request (seconds, six places); `--no-sleep` skips the real waits.
//
//   (cd node && npm ci && npm run build) && node examples/node/guava_scenario.mjs
import assert from 'node:assert/strict';
import path from 'node:path';
import { setTimeout as sleepMs } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { RateLimiter, ManualClock } = await import(path.join(here, '..', '..', 'node', 'index.mjs'));

const sleep = !process.argv.slice(2).includes('--no-sleep');
const clock = new ManualClock();
const limiter = RateLimiter.create(1, { clock });
for (let permits = 1; permits <= 5; permits++) {
  const waited = await limiter.acquire(permits);
  const before = process.hrtime.bigint();
  if (sleep && waited > 0) await sleepMs(waited * 1000);
  const slept = Number(process.hrtime.bigint() - before) / 1e9;
  console.log(`acquire(${permits}) waited ${waited.toFixed(6)} slept ${slept.toFixed(6)}`);
}
assert.equal(clock.nowMicros, 10_000_000n, 'the manual clock moved by the waits');
