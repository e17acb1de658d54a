export type Color = "green" | "yellow" | "red";
export type SrTcmOptions = {
    /**
     * Committed information rate, bytes per
     * second: at least 1.
     */
    cir: number | bigint;
    /**
     * Committed burst size, bytes.
     */
    cbs: number | bigint;
    /**
     * Excess burst size, bytes (`cbs` and `ebs`
     * not both 0).
     */
    ebs: number | bigint;
    /**
     * Run on this clock,
     * for deterministic tests.
     */
    clock?: native.ManualClock | undefined;
};
export type TrTcmOptions = {
    /**
     * Peak information rate, bytes per second:
     * at least `cir`.
     */
    pir: number | bigint;
    /**
     * Peak burst size, bytes: at least 1.
     */
    pbs: number | bigint;
    /**
     * Committed information rate, bytes per
     * second: at least 1.
     */
    cir: number | bigint;
    /**
     * Committed burst size, bytes: at least 1.
     */
    cbs: number | bigint;
    /**
     * Run on this clock,
     * for deterministic tests.
     */
    clock?: native.ManualClock | undefined;
};
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
export class SrTcm {
    /** @param {SrTcmOptions} options */
    constructor(options: SrTcmOptions);
    /**
     * Marks a packet of `bytes` now, colour-blind.
     * @param {number | bigint} bytes Not negative.
     * @returns {Color}
     */
    mark(bytes: number | bigint): Color;
    /**
     * Marks a packet of `bytes` that arrives coloured `color` (by an
     * earlier marker), colour-aware: never a better colour than it came with.
     * @param {number | bigint} bytes Not negative.
     * @param {Color} color
     * @returns {Color}
     */
    markAware(bytes: number | bigint, color: Color): Color;
    /**
     * The buckets' tokens now, in bytes (RFC 2697's Tc and Te).
     * @returns {{ committed: number, excess: number }}
     */
    tokens(): {
        committed: number;
        excess: number;
    };
    get [Symbol.toStringTag](): string;
    #private;
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
export class TrTcm {
    /** @param {TrTcmOptions} options */
    constructor(options: TrTcmOptions);
    /**
     * Marks a packet of `bytes` now, colour-blind.
     * @param {number | bigint} bytes Not negative.
     * @returns {Color}
     */
    mark(bytes: number | bigint): Color;
    /**
     * Marks a packet of `bytes` that arrives coloured `color`, colour-aware.
     * @param {number | bigint} bytes Not negative.
     * @param {Color} color
     * @returns {Color}
     */
    markAware(bytes: number | bigint, color: Color): Color;
    /**
     * The buckets' tokens now, in bytes (RFC 2698's Tp and Tc).
     * @returns {{ peak: number, committed: number }}
     */
    tokens(): {
        peak: number;
        committed: number;
    };
    get [Symbol.toStringTag](): string;
    #private;
}
import native = require("./binding.js");
