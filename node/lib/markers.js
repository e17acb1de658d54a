'use strict';
/**
 * The three-colour markers: `SrTcm` (RFC 2697) and `TrTcm` (RFC 2698).
 * They police traffic without dropping it: each packet is marked green,
 * yellow or red, and the caller decides what each colour means. Thin
 * shells over native functions bound to one marker
 * (bindings/node/src/markers.rs).
 * @module
 */

const native = require('./binding.js');
const { readOptions } = require('./options.js');

/** @typedef {'green' | 'yellow' | 'red'} Color */

/** Colours by the native module's numbers. @type {readonly Color[]} */
const COLORS = Object.freeze(['green', 'yellow', 'red']);

/**
 * @typedef {object} SrTcmOptions
 * @property {number | bigint} cir Committed information rate, bytes per
 *   second: at least 1.
 * @property {number | bigint} cbs Committed burst size, bytes.
 * @property {number | bigint} ebs Excess burst size, bytes (`cbs` and `ebs`
 *   not both 0).
 * @property {import('./binding.js').ManualClock} [clock] Run on this clock,
 *   for deterministic tests.
 */

/**
 * RFC 2697's single rate three colour marker: green within the committed
 * burst, yellow within the excess burst, red beyond. Buckets start full.
 *
 * @example
 * const marker = new SrTcm({ cir: 125_000, cbs: 10_000, ebs: 20_000 });
 * if (marker.mark(packet.length) === 'red') drop(packet);
 */
class SrTcm {
  /** @type {import('./binding.js').MarkerMethods} */
  #native;

  /** @param {SrTcmOptions} options */
  constructor(options) {
    const o = readOptions(options, ['cir', 'cbs', 'ebs', 'clock']);
    this.#native = native.srtcmCreate(o.cir, o.cbs, o.ebs, o.clock);
  }

  /**
   * Marks a packet of `bytes` now, colour-blind.
   * @param {number | bigint} bytes Not negative.
   * @returns {Color}
   */
  mark(bytes) {
    return COLORS[this.#native.mark(bytes)];
  }

  /**
   * Marks a packet of `bytes` that arrives coloured `color` (by an
   * earlier marker), colour-aware: never a better colour than it came with.
   * @param {number | bigint} bytes Not negative.
   * @param {Color} color
   * @returns {Color}
   */
  markAware(bytes, color) {
    return COLORS[this.#native.markAware(bytes, color)];
  }

  /**
   * The buckets' tokens now, in bytes (RFC 2697's Tc and Te).
   * @returns {{ committed: number, excess: number }}
   */
  tokens() {
    this.#native.tokens();
    const s = this.#native.scratch;
    return { committed: s[0], excess: s[1] };
  }

  get [Symbol.toStringTag]() {
    return 'SrTcm';
  }
}

/**
 * @typedef {object} TrTcmOptions
 * @property {number | bigint} pir Peak information rate, bytes per second:
 *   at least `cir`.
 * @property {number | bigint} pbs Peak burst size, bytes: at least 1.
 * @property {number | bigint} cir Committed information rate, bytes per
 *   second: at least 1.
 * @property {number | bigint} cbs Committed burst size, bytes: at least 1.
 * @property {import('./binding.js').ManualClock} [clock] Run on this clock,
 *   for deterministic tests.
 */

/**
 * RFC 2698's two rate three colour marker: red above the peak rate, yellow
 * above the committed rate, green within both. Buckets start full.
 */
class TrTcm {
  /** @type {import('./binding.js').MarkerMethods} */
  #native;

  /** @param {TrTcmOptions} options */
  constructor(options) {
    const o = readOptions(options, ['pir', 'pbs', 'cir', 'cbs', 'clock']);
    this.#native = native.trtcmCreate(o.pir, o.pbs, o.cir, o.cbs, o.clock);
  }

  /**
   * Marks a packet of `bytes` now, colour-blind.
   * @param {number | bigint} bytes Not negative.
   * @returns {Color}
   */
  mark(bytes) {
    return COLORS[this.#native.mark(bytes)];
  }

  /**
   * Marks a packet of `bytes` that arrives coloured `color`, colour-aware.
   * @param {number | bigint} bytes Not negative.
   * @param {Color} color
   * @returns {Color}
   */
  markAware(bytes, color) {
    return COLORS[this.#native.markAware(bytes, color)];
  }

  /**
   * The buckets' tokens now, in bytes (RFC 2698's Tp and Tc).
   * @returns {{ peak: number, committed: number }}
   */
  tokens() {
    this.#native.tokens();
    const s = this.#native.scratch;
    return { peak: s[0], committed: s[1] };
  }

  get [Symbol.toStringTag]() {
    return 'TrTcm';
  }
}

module.exports = { SrTcm, TrTcm };
