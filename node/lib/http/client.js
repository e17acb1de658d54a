'use strict';
/**
 * The client's address behind proxies the server trusts — and only those:
 * `Forwarded` (RFC 7239) and `X-Forwarded-For` are read only while the hop
 * that sent them is a trusted proxy, so a client that writes them itself
 * changes nothing. The walk is the Rust library's
 * (`ratekeeper::http::client_address`), the same in every language.
 * @module
 */

const native = require('../binding.js');

/**
 * A list of proxies whose forwarding headers are believed: addresses
 * (`'10.0.0.7'`, `'::1'`), CIDR blocks (`'10.0.0.0/8'`, `'fd00::/8'`), and
 * the names `'loopback'` (127.0.0.0/8 and ::1) and `'private'` (RFC 1918
 * and fc00::/7). None by default: the TCP peer is the client.
 *
 * @example
 * // Behind a load balancer on the private network:
 * const trusted = new TrustedProxies(['private']);
 * trusted.clientAddress(req.socket.remoteAddress, req.headers.forwarded, req.headers['x-forwarded-for']);
 */
class TrustedProxies {
  /** @type {import('../binding.js').TrustedProxiesMethods} */
  #native;

  /**
   * @param {Iterable<string>} [entries=[]] Bad text throws a `RangeError`
   *   (`ERR_RATEKEEPER_INVALID_ARGUMENT`) naming the entry.
   */
  constructor(entries) {
    this.#native = native.httpTrustedProxiesCreate(entries === undefined ? [] : Array.from(entries));
  }

  /**
   * Whether `address` is one of the trusted proxies (an IPv4-mapped IPv6
   * address as its IPv4 one).
   * @param {string} address An IP address; anything else throws a
   *   `RangeError`.
   * @returns {boolean}
   */
  contains(address) {
    return this.#native.contains(address);
  }

  /**
   * The client's address, in canonical text (an IPv4-mapped IPv6 peer as
   * IPv4): start at the TCP peer; while the current hop is trusted, step to
   * the hop before it as `Forwarded`'s `for=` (preferred when present) or
   * `X-Forwarded-For` (rightmost first) names it. The first hop not
   * trusted is the client. A malformed entry stops the walk at the last
   * good hop.
   * @param {string} peer The TCP peer (`req.socket.remoteAddress`).
   * @param {string | string[]} [forwarded] The `Forwarded` field.
   * @param {string | string[]} [xForwardedFor] The `X-Forwarded-For` field.
   * @returns {string}
   */
  clientAddress(peer, forwarded, xForwardedFor) {
    return this.#native.clientAddress(peer, joined(forwarded), joined(xForwardedFor));
  }

  /**
   * The client's rate-limit key: `clientAddress`'s address, an IPv6 one as
   * its block of `ipv6Prefix` bits in CIDR notation (`'2001:db8:0:100::/56'`:
   * a subscriber is given a whole /56 or /64 and could rotate through its
   * addresses), an IPv4 one as it is. The same key as the Python and Rust
   * middleware give the same client.
   * @param {string} peer The TCP peer (`req.socket.remoteAddress`).
   * @param {string | string[]} [forwarded] The `Forwarded` field.
   * @param {string | string[]} [xForwardedFor] The `X-Forwarded-For` field.
   * @param {number} [ipv6Prefix=56] Bits of an IPv6 address that make the
   *   key, from 1 to 128 (the whole address); anything else throws a
   *   `RangeError` (a non-number a `TypeError`).
   * @returns {string}
   */
  clientKey(peer, forwarded, xForwardedFor, ipv6Prefix) {
    return this.#native.clientKey(peer, joined(forwarded), joined(xForwardedFor), ipv6Prefix);
  }

  get [Symbol.toStringTag]() {
    return 'TrustedProxies';
  }
}

/**
 * A field's lines as one value (Node.js gives repeated unknown fields as
 * an array in some APIs): joined with commas, as HTTP combines them.
 * @param {string | string[] | undefined} value
 * @returns {string | undefined}
 */
function joined(value) {
  return Array.isArray(value) ? value.join(', ') : value;
}

module.exports = { TrustedProxies };
