// The load-driven limiters (Bbr, SystemGuard) on a ManualClock and a
// ManualLoad, so that every decision is deterministic; and the real
// SystemLoad, which must read this machine.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  Bbr,
  BbrPermit,
  codes,
  Decision,
  ManualClock,
  ManualLoad,
  SystemGuard,
  SystemLoad,
  SystemPermit,
} from '../index.mjs';
import { OPTION, RANGE, throws, TYPE } from './expect-error.mjs';

/**
 * A BBR limiter that has seen ten requests of 10 ms in a row, then 100 ms
 * more: nine ended in its first 100 ms bucket, so its capacity is
 * ⌊9 × 10 ms × 10 buckets/s / 1000⌋ = 0 (the same history as the Rust
 * library's own test, crates/ratekeeper/src/load_driven.rs).
 */
function warmedUp() {
  const clock = new ManualClock();
  const load = new ManualLoad();
  const bbr = new Bbr({ windowMs: 1000, buckets: 10, load, clock });
  for (let i = 0; i < 10; i++) {
    const permit = bbr.tryAcquire();
    assert.ok(permit instanceof BbrPermit, `request ${i} admitted while the CPU is unknown`);
    clock.advance(10);
    permit.release();
  }
  clock.advance(100);
  return { clock, load, bbr };
}

test('BBR sheds only while the CPU is high, and for the cool-down after', () => {
  const { clock, load, bbr } = warmedUp();
  // Low CPU: however many are in flight, nothing is shed.
  load.setCpuUsage(0.5);
  const held = Array.from({ length: 5 }, () => bbr.tryAcquire());
  assert.ok(held.every((p) => p instanceof BbrPermit));
  // At the threshold (0.8 by default) with 5 in flight over a capacity of 0: shed.
  load.setCpuUsage(0.8);
  const { decision, permit } = bbr.check();
  assert.equal(permit, undefined);
  assert.ok(decision instanceof Decision);
  assert.deepEqual([decision.allowed, decision.limit], [false, 0]);
  // Below the threshold but within the cool-down (1 s): still shedding.
  load.setCpuUsage(0.1);
  clock.advance(999);
  assert.equal(bbr.tryAcquire(), undefined);
  // The cool-down over: admitted again.
  clock.advance(2);
  const admitted = bbr.tryAcquire();
  assert.ok(admitted instanceof BbrPermit);
  assert.equal(admitted.decision.allowed, true);
  for (const p of [...held, admitted]) p.release();
  assert.equal(bbr.stats().inFlight, 0);
});

test('BBR with an unknown CPU reading sheds nothing', () => {
  const { load, bbr } = warmedUp();
  load.clear();
  const held = Array.from({ length: 20 }, () => bbr.tryAcquire());
  assert.ok(held.every((p) => p instanceof BbrPermit));
  assert.equal(bbr.stats().inFlight, 20);
});

test('BBR stats: CPU, in flight, maxPass, minRt, capacity', () => {
  const { clock, load, bbr } = warmedUp();
  load.setCpuUsage(0.25);
  const held = [bbr.tryAcquire(), bbr.tryAcquire()];
  assert.deepEqual(bbr.stats(), { cpuUsage: 0.25, inFlight: 2, maxPass: 9, minRtMs: 10, maxInFlight: 0 });
  // Thirty requests of 50 ms, all ending in one bucket: maxPass 30, and
  // minRt stays the 10 ms of the first bucket (the lowest average).
  clock.advance(100);
  const many = Array.from({ length: 30 }, () => bbr.tryAcquire());
  clock.advance(50);
  for (const p of many) p.release();
  clock.advance(100);
  const stats = bbr.stats();
  assert.deepEqual(stats, { cpuUsage: 0.25, inFlight: 2, maxPass: 30, minRtMs: 10, maxInFlight: 3 });
  for (const p of held) p.release();
});

test('a BBR permit releases once: later releases do nothing', () => {
  const bbr = new Bbr({ load: new ManualLoad(), clock: new ManualClock() });
  const a = bbr.tryAcquire();
  const b = bbr.tryAcquire();
  assert.equal(bbr.stats().inFlight, 2);
  assert.equal(a.released, false);
  a.release();
  assert.equal(a.released, true);
  a.release();
  a.release();
  assert.equal(bbr.stats().inFlight, 1, 'b is still in flight');
  b.release();
  assert.equal(bbr.stats().inFlight, 0);
  if (typeof Symbol.dispose === 'symbol') {
    const c = bbr.tryAcquire();
    c[Symbol.dispose]();
    assert.equal(c.released, true);
    assert.equal(bbr.stats().inFlight, 0);
  }
});

test('a system permit releases once: later releases do nothing', () => {
  const guard = new SystemGuard({ maxThread: 10, load: new ManualLoad(), clock: new ManualClock() });
  const a = guard.tryAcquire();
  const b = guard.tryAcquire(3);
  assert.ok(a instanceof SystemPermit && b instanceof SystemPermit);
  a.release();
  a.release();
  assert.equal(guard.stats().inFlight, 1);
  assert.equal(guard.stats().successQps, 1);
  b.release();
  b.release();
  assert.deepEqual([guard.stats().inFlight, guard.stats().successQps], [0, 4]);
});

test('permits have no public constructor', () => {
  for (const Class of [BbrPermit, SystemPermit]) {
    assert.throws(() => new Class(), (e) => e instanceof TypeError && e.code === codes.invalidArgType);
  }
});

/** A guard with `rule` on its own clock and manual load. */
function guarded(rule) {
  const clock = new ManualClock();
  const load = new ManualLoad();
  return { clock, load, guard: new SystemGuard({ ...rule, load, clock }) };
}

/** `guard.check(count)`: it refuses, naming `threshold`. */
function refusedBy(guard, threshold, count) {
  const { decision, permit, threshold: named } = guard.check(count);
  assert.equal(permit, undefined, `refused by ${threshold}`);
  assert.equal(decision.allowed, false);
  assert.equal(named, threshold);
}

test('the system guard names each threshold that refuses', () => {
  // qps: the second's admitted count plus this one's, above the threshold.
  {
    const { guard } = guarded({ qps: 2 });
    const first = guard.check();
    assert.equal(first.threshold, undefined);
    assert.deepEqual([first.decision.limit, first.decision.remaining], [2, 1]);
    assert.ok(guard.tryAcquire());
    refusedBy(guard, 'qps');
  }
  // thread: more in flight than the threshold before this one.
  {
    const { guard } = guarded({ maxThread: 1 });
    const held = [guard.tryAcquire(), guard.tryAcquire()];
    assert.ok(held.every((p) => p instanceof SystemPermit));
    refusedBy(guard, 'thread');
    held[0].release();
    assert.ok(guard.tryAcquire() instanceof SystemPermit);
  }
  // rt: the last second's average round trip above the threshold.
  {
    const { clock, guard } = guarded({ avgRtMs: 10 });
    const slow = guard.tryAcquire();
    clock.advance(20);
    slow.release();
    assert.equal(guard.stats().avgRtMs, 20);
    refusedBy(guard, 'rt');
  }
  // load: the load average above the threshold and the BBR check failing
  // (more than one in flight, more than maxSuccessQps × minRt / 1000).
  {
    const { load, guard } = guarded({ highestSystemLoad: 1 });
    guard.tryAcquire().release(); // a completion of 0 ms: minRt 1 ms
    const held = [guard.tryAcquire(), guard.tryAcquire()];
    assert.ok(guard.tryAcquire() instanceof SystemPermit, 'the load average is unknown: 0');
    load.setLoadAverage(5);
    refusedBy(guard, 'load');
    for (const p of held) p.release();
  }
  // cpu: the CPU usage above the threshold.
  {
    const { load, guard } = guarded({ highestCpuUsage: 0.5 });
    load.setCpuUsage(0.5);
    assert.ok(guard.tryAcquire() instanceof SystemPermit, 'at the threshold: admitted');
    load.setCpuUsage(0.9);
    refusedBy(guard, 'cpu');
    assert.deepEqual([guard.stats().passQps, guard.stats().blockQps], [1, 1]);
  }
});

test('the system guard checks its thresholds in Sentinel\'s order', () => {
  const { load, guard } = guarded({ qps: 1, highestCpuUsage: 0.5 });
  load.setCpuUsage(0.9);
  refusedBy(guard, 'qps', 2);
  refusedBy(guard, 'cpu', 1);
});

test('system guard stats', () => {
  const { clock, guard } = guarded({ maxThread: 100 });
  const a = guard.tryAcquire(2);
  const b = guard.tryAcquire();
  clock.advance(30);
  a.release();
  clock.advance(10);
  b.release();
  const c = guard.tryAcquire();
  assert.deepEqual(guard.stats(), {
    passQps: 4,
    blockQps: 0,
    successQps: 3,
    inFlight: 1,
    avgRtMs: 70 / 3,
    minRtMs: 30,
    maxSuccessQps: 6,
  });
  c.release();
});

test('setRule replaces the rule; a bad one changes nothing', () => {
  const { load, guard } = guarded({ maxThread: 1, avgRtMs: 5.5 });
  assert.deepEqual(guard.rule, { maxThread: 1, avgRtMs: 5.5 });
  load.setCpuUsage(0.9);
  assert.ok(guard.tryAcquire());
  guard.setRule({ highestCpuUsage: 0.8, qps: 100 });
  assert.deepEqual(guard.rule, { qps: 100, highestCpuUsage: 0.8 });
  refusedBy(guard, 'cpu');
  throws(() => guard.setRule({ highestCpuUsage: 1.5 }), RANGE, 'highestCpuUsage', 1.5);
  throws(() => guard.setRule({ maxThread: -1 }), RANGE, 'maxThread', -1);
  throws(() => guard.setRule({ qp: 1 }), OPTION, 'options');
  assert.deepEqual(guard.rule, { qps: 100, highestCpuUsage: 0.8 });
  guard.setRule({ avgRtMicros: 1500n });
  assert.deepEqual(guard.rule, { avgRtMs: 1.5 });
  guard.setRule({});
  assert.deepEqual(guard.rule, {});
  assert.ok(guard.tryAcquire(), 'no threshold: nothing refused');
  assert.equal(guard.stats().blockQps, 1, 'the statistics stay');
});

test('the manual load: readings, unknown until set, clear', () => {
  const load = new ManualLoad({ loadAverage: 2.5 });
  assert.deepEqual([load.cpuUsage, load.loadAverage], [undefined, 2.5]);
  load.setCpuUsage(0.75);
  load.setLoadAverage(0);
  assert.deepEqual([load.cpuUsage, load.loadAverage], [0.75, 0]);
  load.clear();
  assert.deepEqual([load.cpuUsage, load.loadAverage], [undefined, undefined]);
  assert.deepEqual(new ManualLoad({ cpuUsage: 1 }).cpuUsage, 1);
});

test('bad arguments: RangeError or TypeError naming the argument', () => {
  const make = (options) => () => new Bbr({ load: new ManualLoad(), ...options });
  throws(make({ windowMs: 0 }), RANGE, 'windowMs', 0);
  throws(make({ windowMicros: -5n }), RANGE, 'windowMicros', -5n);
  throws(make({ windowMs: '10' }), TYPE, 'windowMs', '10');
  throws(make({ buckets: 0 }), RANGE, 'buckets', 0);
  throws(make({ buckets: 129 }), RANGE, 'buckets', 129);
  throws(make({ buckets: 2 ** 40 }), RANGE, 'buckets', 2 ** 40);
  throws(make({ buckets: 1.5 }), RANGE, 'buckets', 1.5);
  throws(make({ windowMicros: 5, buckets: 10 }), RANGE, 'buckets', 10);
  throws(make({ cpuThreshold: 1.01 }), RANGE, 'cpuThreshold', 1.01);
  throws(make({ cpuThreshold: NaN }), RANGE, 'cpuThreshold', NaN);
  throws(make({ cpuThreshold: '0.5' }), TYPE, 'cpuThreshold', '0.5');
  throws(make({ coolDownMs: -1 }), RANGE, 'coolDownMs', -1);
  throws(make({ coolDownMicros: 1.5 }), RANGE, 'coolDownMicros', 1.5);
  throws(make({ load: {} }), TYPE, 'load', {}, false);
  throws(make({ load: new ManualClock() }), TYPE, 'load', undefined, false);
  throws(make({ clock: new ManualLoad() }), TYPE, 'clock', undefined, false);
  throws(make({ windowMs: 1, windowMicros: 1 }), OPTION, 'options');

  const guard = (options) => () => new SystemGuard({ load: new ManualLoad(), ...options });
  throws(guard({ qps: -1 }), RANGE, 'qps', -1);
  throws(guard({ qps: Infinity }), RANGE, 'qps', Infinity);
  throws(guard({ maxThread: -1 }), RANGE, 'maxThread', -1);
  throws(guard({ maxThread: 0.5 }), RANGE, 'maxThread', 0.5);
  throws(guard({ avgRtMs: -1 }), RANGE, 'avgRtMs', -1);
  throws(guard({ avgRtMicros: -1n }), RANGE, 'avgRtMicros', -1n);
  throws(guard({ highestSystemLoad: -0.5 }), RANGE, 'highestSystemLoad', -0.5);
  throws(guard({ highestCpuUsage: 1.5 }), RANGE, 'highestCpuUsage', 1.5);
  throws(guard({ highestCpuUsage: null }), TYPE, 'highestCpuUsage', null);
  const g = guard({ qps: 10 })();
  throws(() => g.tryAcquire(-1), RANGE, 'count', -1);
  throws(() => g.check('1'), TYPE, 'count', '1');

  throws(() => new ManualLoad({ cpuUsage: 1.5 }), RANGE, 'cpuUsage', 1.5);
  throws(() => new ManualLoad({ loadAverage: -1 }), RANGE, 'loadAverage', -1);
  const load = new ManualLoad({ cpuUsage: 0.5 });
  throws(() => load.setCpuUsage(-0.1), RANGE, 'cpuUsage', -0.1);
  throws(() => load.setCpuUsage(NaN), RANGE, 'cpuUsage', NaN);
  throws(() => load.setLoadAverage(Infinity), RANGE, 'loadAverage', Infinity);
  throws(() => load.setLoadAverage('1'), TYPE, 'loadAverage', '1');
  assert.equal(load.cpuUsage, 0.5, 'a refused reading leaves the reading as it was');
});

test('unknown options are refused, as every class refuses them', () => {
  throws(() => new Bbr({ window: 1000 }), OPTION, 'options');
  throws(() => new Bbr({ cpu_threshold: 0.5 }), OPTION, 'options');
  throws(() => new SystemGuard({ maxThreads: 1 }), OPTION, 'options');
  throws(() => new ManualLoad({ cpu: 0.5 }), OPTION, 'options');
  throws(() => new SystemLoad({ interval: 100 }), OPTION, 'options');
  throws(() => new Bbr(/** @type {any} */ (5)), TYPE, 'options', 5);
});

test('the system load reads this machine', async () => {
  const load = new SystemLoad({ intervalMs: 20, decay: 0 });
  const average = load.loadAverage;
  assert.equal(typeof average, 'number', 'the load average is read when the sampler starts');
  assert.ok(average >= 0 && Number.isFinite(average));
  let cpu;
  for (let i = 0; i < 100 && cpu === undefined; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    cpu = load.cpuUsage;
  }
  assert.equal(typeof cpu, 'number', 'a CPU reading after a few intervals');
  assert.ok(cpu >= 0 && cpu <= 1, `cpu ${cpu}`);

  const shared = SystemLoad.shared();
  assert.equal(SystemLoad.shared(), shared, 'one shared sampler');
  assert.ok(shared instanceof SystemLoad);
  assert.equal(typeof shared.loadAverage, 'number');
  // Limiters read it when given no load.
  const bbr = new Bbr();
  const permit = bbr.tryAcquire();
  assert.ok(permit instanceof BbrPermit);
  permit.release();
  const guard = new SystemGuard({ load: shared, highestCpuUsage: 1 });
  assert.ok(guard.tryAcquire() instanceof SystemPermit);

  throws(() => new SystemLoad({ decay: 1 }), RANGE, 'decay', 1);
  throws(() => new SystemLoad({ intervalMs: 0.1 }), RANGE, 'intervalMs', 0.1);
  throws(() => new SystemLoad({ intervalMicros: 999 }), RANGE, 'intervalMicros', 999);
});
