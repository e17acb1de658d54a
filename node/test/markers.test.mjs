// The three-colour markers, RFC 2697 (SrTcm) and RFC 2698 (TrTcm), on
// ManualClocks.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ManualClock, SrTcm, TrTcm } from '../index.mjs';

test('SrTcm: green within the committed burst, yellow within the excess, red beyond', () => {
  const clock = new ManualClock();
  const marker = new SrTcm({ cir: 1000, cbs: 1500, ebs: 1500, clock });
  assert.deepEqual(marker.tokens(), { committed: 1500, excess: 1500 });
  assert.deepEqual([marker.mark(1500), marker.mark(1500), marker.mark(1500)], ['green', 'yellow', 'red']);
  assert.deepEqual(marker.tokens(), { committed: 0, excess: 0 });
  // Tokens come back at cir bytes per second, the committed bucket first.
  clock.advance(1000);
  assert.deepEqual(marker.tokens(), { committed: 1000, excess: 0 });
  clock.advance(1000);
  assert.deepEqual(marker.tokens(), { committed: 1500, excess: 500 });
  assert.equal(marker.mark(0), 'green');
  assert.equal(marker.mark(10n), 'green');
});

test('SrTcm colour-aware: a packet never gets a better colour than it came with', () => {
  const marker = new SrTcm({ cir: 1000, cbs: 1500, ebs: 1500, clock: new ManualClock() });
  assert.equal(marker.markAware(100, 'yellow'), 'yellow');
  assert.equal(marker.markAware(100, 'red'), 'red');
  assert.equal(marker.markAware(100, 'green'), 'green');
  // The yellow packet took excess tokens, not committed ones.
  assert.deepEqual(marker.tokens(), { committed: 1400, excess: 1400 });
});

test('TrTcm: red above the peak rate, yellow above the committed rate, green within both', () => {
  const clock = new ManualClock();
  const marker = new TrTcm({ pir: 2000, pbs: 2000, cir: 1000, cbs: 1000, clock });
  assert.deepEqual(marker.tokens(), { peak: 2000, committed: 1000 });
  assert.deepEqual([marker.mark(1000), marker.mark(500), marker.mark(600)], ['green', 'yellow', 'red']);
  assert.deepEqual(marker.tokens(), { peak: 500, committed: 0 });
  clock.advance(1000);
  assert.deepEqual(marker.tokens(), { peak: 2000, committed: 1000 });
  assert.equal(marker.markAware(100, 'yellow'), 'yellow');
  assert.equal(marker.markAware(100, 'green'), 'green');
  assert.equal(marker.markAware(100, 'red'), 'red');
  assert.equal(marker.mark(2001), 'red');
});

test('markers print as themselves', () => {
  const clock = new ManualClock();
  assert.equal(String(new SrTcm({ cir: 1, cbs: 1, ebs: 0, clock })), '[object SrTcm]');
  assert.equal(String(new TrTcm({ pir: 1, pbs: 1, cir: 1, cbs: 1, clock })), '[object TrTcm]');
});
