// What every error test checks: a RangeError (out of range) or TypeError
// (wrong type, bad options) with a stable code, naming the argument and
// the value as given. Not a test file itself (no .test. in its name).
import assert from 'node:assert/strict';

export const RANGE = { class: RangeError, code: 'ERR_RATEKEEPER_INVALID_ARGUMENT' };
export const TYPE = { class: TypeError, code: 'ERR_RATEKEEPER_INVALID_ARG_TYPE' };
export const OPTION = { class: TypeError, code: 'ERR_RATEKEEPER_INVALID_OPTION' };

/** How a value shows in a message. */
export function shown(value) {
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (Object.is(value, -0)) return '-0';
  return String(value);
}

/** Asserts that `error` is of `kind`, names `argument`, and carries `value` (when `hasValue`). */
export function check(error, kind, argument, value, hasValue = true) {
  assert.ok(error instanceof kind.class, `${error?.constructor?.name}: ${error?.message}`);
  assert.equal(error.code, kind.code, error.message);
  assert.equal(error.argument, argument, error.message);
  if (kind === OPTION) return;
  assert.ok(error.message.startsWith(`invalid argument ${argument}`), error.message);
  if (!hasValue) return;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string') {
    assert.ok(error.message.includes(shown(value)), `${error.message} should show ${shown(value)}`);
  }
  if (typeof value === 'number' && Number.isNaN(value)) assert.ok(Number.isNaN(error.value));
  else assert.equal(error.value, value, error.message);
}

/** `fn()` throws the error `check` expects. */
export function throws(fn, kind, argument, value, hasValue) {
  let error;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  assert.ok(error !== undefined, `expected ${kind.class.name} for ${argument} = ${shown(value)}, got no error`);
  check(error, kind, argument, value, hasValue);
}

/** `promise` rejects with the error `check` expects. */
export async function rejects(promise, kind, argument, value, hasValue) {
  assert.ok(promise instanceof Promise, 'an async method reports errors by rejecting');
  let error;
  try {
    await promise;
  } catch (e) {
    error = e;
  }
  assert.ok(error !== undefined, `expected a rejection for ${argument} = ${shown(value)}`);
  check(error, kind, argument, value, hasValue);
}
