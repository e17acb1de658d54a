'use strict';
/**
 * The HTTP response fields of a decision in each header style
 * express-rate-limit offers — the IETF drafts 6, 7 and 8 of
 * draft-ietf-httpapi-ratelimit-headers, and the legacy `X-RateLimit-*` —
 * plus `Retry-After`. Written by the Rust library
 * (`ratekeeper::http::response_fields`), so that every language sends the
 * same bytes; this module passes the decisions to it.
 * @module
 */

const native = require('../binding.js');
const { Decision, records } = require('../decision.js');
const { readOptions } = require('../options.js');

/**
 * @typedef {'draft-6' | 'draft-7' | 'draft-8' | 'none'} HeaderStyle Which
 *   `RateLimit` fields to send: `draft-6` (`RateLimit-Limit`,
 *   `-Remaining`, `-Reset`, `RateLimit-Policy`), `draft-7` (`RateLimit:
 *   limit=…, remaining=…, reset=…` and `RateLimit-Policy`), `draft-8`
 *   (structured `RateLimit` and `RateLimit-Policy` lists naming each
 *   policy; the default), or `none`.
 */

/**
 * @typedef {object} FieldOptions
 * @property {HeaderStyle} [style] Default `draft-8`.
 * @property {boolean} [legacy] Also `X-RateLimit-Limit`, `-Remaining` and
 *   `-Reset` (epoch seconds, as express-rate-limit sends it). Default false.
 * @property {string} [name] The policy's name when `parts` is not given
 *   (default `'default'`).
 * @property {Iterable<readonly [string, Decision]>} [parts] One decision per
 *   policy, each with its name (a composite's parts); the default is
 *   `[[name, decision]]`.
 */

const FIELD_OPTIONS = Object.freeze(['style', 'legacy', 'name', 'parts']);

/**
 * The response fields' names, by their codes in the fields' text of the
 * native functions: in canonical case (`RateLimit-Policy`), as Node.js's
 * `setHeader` sends them.
 * @type {readonly string[]}
 */
const FIELD_NAMES = Object.freeze(native.httpFieldNames());

/**
 * The same in lower case, as Fastify's `reply.header` keeps them: a name
 * already in lower case is stored without a new string.
 * @type {readonly string[]}
 */
const LOWER_CASE_FIELD_NAMES = Object.freeze(FIELD_NAMES.map((name) => name.toLowerCase()));

/**
 * The response fields of the native functions' text — each field its
 * name's code (the digit `'0' + i`, `i` its index in `names`) then its
 * value, fields separated by `'\n'` — as `[name, value, name, value, …]`.
 * @param {string} text
 * @param {readonly string[]} [names=FIELD_NAMES]
 * @returns {string[]}
 */
function fieldList(text, names = FIELD_NAMES) {
  /** @type {string[]} */
  const fields = [];
  if (text === '') return fields;
  let start = 0;
  for (;;) {
    const end = text.indexOf('\n', start);
    fields.push(names[text.charCodeAt(start) - 48], end === -1 ? text.slice(start + 1) : text.slice(start + 1, end));
    if (end === -1) return fields;
    start = end + 1;
  }
}

/**
 * The header style `style` names, checked, as the number the native
 * functions take: `undefined` is the default (`draft-8`); anything else
 * but the four names throws a `RangeError`
 * (`ERR_RATEKEEPER_INVALID_ARGUMENT`) naming `argument`.
 * @param {unknown} style
 * @param {'style' | 'standardHeaders'} [argument='style']
 * @returns {number}
 */
function headerStyle(style, argument = 'style') {
  return native.httpHeaderStyle(style, argument);
}

/**
 * Every response field for a request's decision, by name, ready for
 * `res.set(fields)` or `res.writeHead(status, fields)`: the `RateLimit`
 * fields of `style`, the legacy ones if asked, and `Retry-After` (whole
 * seconds, rounded up) when the request was refused and a wait can admit
 * it. Names are in canonical case (`RateLimit-Policy`).
 *
 * @example
 * const d = await redisLimiter.check(key);
 * res.set(responseFields(d, { name: '100-in-1min', style: 'draft-7' }));
 * @param {Decision} decision The decision that admitted or refused the
 *   request (a composite's combined one).
 * @param {FieldOptions} [options]
 * @returns {Record<string, string>}
 */
function responseFields(decision, options) {
  const o = readOptions(options, FIELD_OPTIONS);
  if (!(decision instanceof Decision)) native.throwWrongType('decision', decision, 'a Decision');
  const style = headerStyle(o.style);
  /** @type {unknown[]} */
  const names = [];
  /** @type {Decision[]} */
  const decisions = [decision];
  if (o.parts === undefined) {
    names.push(o.name ?? 'default');
    decisions.push(decision);
  } else {
    let i = 0;
    for (const part of o.parts) {
      if (!Array.isArray(part) || part.length !== 2) native.throwWrongType(`parts[${i}]`, part, 'a [name, Decision] pair');
      if (!(part[1] instanceof Decision)) native.throwWrongType(`parts[${i}][1]`, part[1], 'a Decision');
      names.push(part[0]);
      decisions.push(part[1]);
      i++;
    }
  }
  return fieldsObject(fieldList(native.httpResponseFields(style, o.legacy === true, unixNowSecs(), names, records(decisions))));
}

/**
 * The Unix time in whole seconds, for the legacy `X-RateLimit-Reset`.
 * @returns {number}
 */
function unixNowSecs() {
  return Math.floor(Date.now() / 1000);
}

/**
 * `[name, value, name, value, …]` as an object.
 * @param {string[]} flat
 * @returns {Record<string, string>}
 */
function fieldsObject(flat) {
  /** @type {Record<string, string>} */
  const fields = {};
  for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
  return fields;
}

module.exports = { responseFields, headerStyle, unixNowSecs, fieldsObject, fieldList, FIELD_NAMES, LOWER_CASE_FIELD_NAMES };
