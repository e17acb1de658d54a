// Sentinel's flow rule (FlowController) on a ManualClock, so that every
// decision is deterministic: the waits entry() waits, the permits (ended
// once, on dispose, when collected), the rule and its run-time change, the
// statistics, and the errors of every option.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { codes, Decision, FlowController, FlowPermit, ManualClock } from '../index.mjs';
import { OPTION, RANGE, throws, TYPE } from './expect-error.mjs';

test('the rate limiter spaces entries by their cost: 5 permits then 1 wait 0 and 100 ms', async () => {
  const clock = new ManualClock();
  const flow = new FlowController({ rule: { count: 10, controlBehavior: 'rateLimiter', maxQueueingTimeMs: 500 }, clock });
  const first = await flow.entry(5);
  const second = await flow.entry(1);
  assert.ok(first instanceof FlowPermit && second instanceof FlowPermit);
  assert.deepEqual([first.decision.waitMicros, second.decision.waitMicros], [0n, 100_000n]);
  assert.equal(clock.now, 100); // the manual clock advanced by the wait
  // check() does not wait: five more fill the 500 ms queue, then a refusal.
  const waits = [1, 2, 3, 4, 5].map(() => flow.check().decision.waitMs);
  assert.deepEqual(waits, [100, 200, 300, 400, 500]);
  const refused = flow.check();
  assert.ok(refused.decision instanceof Decision);
  assert.equal(refused.decision.allowed, false);
  assert.equal(refused.permit, undefined);
  assert.equal(await flow.entry(), undefined);
  assert.equal(clock.now, 100);
});

test('a prioritized entry waits for the window it occupies', async () => {
  const clock = new ManualClock();
  const flow = new FlowController({ rule: { count: 2 }, clock });
  (await flow.entry(2)).exit();
  clock.advance(600);
  assert.equal(await flow.entry(1), undefined);
  const entry = await flow.entry(1, true);
  assert.equal(entry?.decision.waitMs, 400);
  assert.equal(clock.now, 1000);
  entry?.release();
  assert.equal(flow.stats().passQps, 1);
});

test('entry() waits on a timer with a real clock', async () => {
  // 5 per second: the second entry waits the rest of the first's 200 ms.
  const flow = new FlowController({ rule: { count: 5, controlBehavior: 'rateLimiter' } });
  (await flow.entry())?.exit();
  const started = performance.now();
  const second = await flow.entry();
  second?.exit();
  assert.ok(second !== undefined && second.decision.waitMs > 0 && second.decision.waitMs <= 200);
  assert.ok(performance.now() - started >= second.decision.waitMs - 1);
});

test('thread-grade permits end once, on dispose, and when collected', async () => {
  const clock = new ManualClock();
  const flow = new FlowController({ rule: { count: 1, grade: 'thread' }, clock });
  const entry = await flow.entry();
  assert.equal(flow.check().permit, undefined);
  assert.equal(flow.stats().inFlight, 1);
  clock.advance(30);
  entry?.exit();
  assert.equal(entry?.released, true);
  entry?.exit(); // a second end does nothing
  const stats = flow.stats();
  assert.deepEqual([stats.inFlight, stats.successQps, stats.avgRtMs], [0, 1, 30]);
  const { permit } = flow.check();
  assert.ok(permit);
  if (typeof Symbol.dispose === 'symbol') {
    permit[Symbol.dispose]();
  } else {
    flow.release(permit);
  }
  assert.equal(flow.stats().inFlight, 0);
  // A permit dropped unreleased is released when collected.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  (() => {
    assert.ok(flow.check().permit); // dropped on the floor
  })();
  assert.equal(flow.stats().inFlight, 1);
  for (let tries = 0; tries < 50 && flow.stats().inFlight > 0; tries++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(flow.stats().inFlight, 0);
});

test('rules are read back whole and change at run time; the statistics stay', () => {
  const clock = new ManualClock();
  const flow = new FlowController({ rule: { count: 1 }, sampleCount: 4, intervalMs: 2000, clock });
  assert.deepEqual(flow.rule, {
    count: 1,
    grade: 'qps',
    controlBehavior: 'default',
    warmUpPeriodSec: 10,
    coldFactor: 3,
    maxQueueingTimeMs: 500,
  });
  // 1 per second over an interval of two seconds: two passes.
  assert.deepEqual([1, 2, 3].map(() => flow.check().decision.allowed), [true, true, false]);
  flow.setRule({ count: 2 });
  assert.deepEqual([1, 2, 3].map(() => flow.check().decision.allowed), [true, true, false]);
  flow.addPass(3);
  const stats = flow.stats();
  assert.deepEqual([stats.passQps, stats.blockQps], [3.5, 1]); // 7 and 2 over two seconds
  const both = { count: 20, grade: 'qps', controlBehavior: 'warmUpRateLimiter', warmUpPeriodSec: 3, coldFactor: 4, maxQueueingTimeMs: 300 };
  flow.setRule(both);
  assert.deepEqual(flow.rule, both);
  throws(() => flow.setRule({ count: 1, controlBehavior: 'rateLimiter', maxQueueingTimeMs: 0 }), RANGE, 'maxQueueingTimeMs', 0);
  assert.deepEqual(flow.rule, both); // a bad rule changes nothing
  assert.equal(String(flow), '[object FlowController]');
});

test('bad options are typed errors naming them', () => {
  const make = (rule, options = {}) => () => new FlowController({ rule, ...options });
  throws(make({ count: -1 }), RANGE, 'count', -1);
  throws(make({ count: Infinity }), RANGE, 'count', Infinity);
  throws(make({ count: '1' }), TYPE, 'count', '1');
  throws(make({}), TYPE, 'count', undefined, false);
  throws(make({ count: 1, grade: 'rt' }), RANGE, 'grade', 'rt');
  throws(make({ count: 1, grade: 1 }), TYPE, 'grade', 1);
  throws(make({ count: 1, controlBehavior: 'warm_up' }), RANGE, 'controlBehavior', 'warm_up');
  throws(make({ count: 1, controlBehavior: 'warmUp', warmUpPeriodSec: 0 }), RANGE, 'warmUpPeriodSec', 0);
  throws(make({ count: 1, controlBehavior: 'warmUp', coldFactor: 1 }), RANGE, 'coldFactor', 1);
  throws(make({ count: 1, controlBehavior: 'warmUp', coldFactor: 2.5 }), RANGE, 'coldFactor', 2.5);
  throws(make({ count: 1, controlBehavior: 'rateLimiter', maxQueueingTimeMs: 2 ** 32 }), RANGE, 'maxQueueingTimeMs', 2 ** 32);
  throws(make({ count: 1 }, { sampleCount: 3 }), RANGE, 'sampleCount', 3);
  throws(make({ count: 1 }, { intervalMs: 0 }), RANGE, 'intervalMs', 0);
  throws(make({ count: 1, cuont: 2 }), OPTION, 'options');
  throws(make({ count: 1 }, { clock: {} }), TYPE, 'clock', {}, false);
  const flow = new FlowController({ rule: { count: 1 } });
  throws(() => flow.check(2 ** 31), RANGE, 'acquireCount', 2 ** 31);
  throws(() => flow.check(-1), RANGE, 'acquireCount', -1);
  throws(() => flow.check(1, 1), TYPE, 'prioritized', 1);
  throws(() => flow.addPass(-1), RANGE, 'count', -1);
  throws(() => flow.release({}), TYPE, 'permit', {}, false);
  assert.throws(() => new FlowPermit(), (e) => e instanceof TypeError && e.code === codes.invalidArgType);
});
