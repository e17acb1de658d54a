// The Node.js runner of the cross-language conformance suite.
//
//   node tests/conformance/node/run.mjs PATH...   (normally: tests/conformance/run node)
//
// Reads vector files in the `ratelimit-conformance/1` format
// (tests/conformance/FORMAT.md) and replays every case through the public
// API of the npm package in node/ on a ManualClock, exactly as the Rust
// runner (tests/conformance/rust/src/lib.rs) replays them through the crate:
// the clock moves only by `sleep` steps and by the waits that successful
// acquires make (waiting on a ManualClock advances it).
//
// Prints one line per failing case (the first step that differed, expected
// and actual) and a last line "N passed, N failed"; exits 1 when a case
// failed, 2 on unreadable input.
//
// Numbers: integers arrive as JSON numbers or, beyond 2^53 - 1, as decimal
// strings; both are read exactly, as bigints, and reach the binding without
// loss (`timeoutMicros`, `warmupMicros`, `advanceMicros` take bigints).
// Permit counts are numbers in the API (Guava's `int`): one beyond 2^53 is
// out of range however it is rounded. Doubles are JSON numbers (V8's parser
// rounds correctly) or the strings "NaN", "Infinity", "-Infinity".
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const { RateLimiter, ManualClock, codes } = await import(path.join(here, '..', '..', '..', 'node', 'index.mjs'));

const FORMAT = 'ratelimit-conformance/1';

/** A step or case that could not be replayed as written: a failure. */
class Mismatch extends Error {}

function collectFiles(paths) {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir).sort()) {
      const full = path.join(dir, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (entry.endsWith('.json')) files.push(full);
    }
  };
  for (const p of paths) {
    let stat;
    try {
      stat = statSync(p);
    } catch {
      throw new Error(`${p}: no such file or directory`);
    }
    if (stat.isDirectory()) walk(p);
    else files.push(p);
  }
  return files;
}

/** A signed 64-bit integer field, exactly, as a bigint. */
function intField(obj, key) {
  const v = obj[key];
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) {
    const n = BigInt(v);
    if (n >= -(2n ** 63n) && n < 2n ** 63n) return n;
  }
  throw new Mismatch(`field ${JSON.stringify(key)} = ${JSON.stringify(v)} is not a 64-bit integer`);
}

/** A double field: a JSON number or one of the special strings. */
function doubleField(obj, key) {
  const v = obj[key];
  if (typeof v === 'number') return v;
  if (v === 'NaN') return NaN;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  throw new Mismatch(`missing double field ${JSON.stringify(key)}`);
}

function boolField(obj, key) {
  if (typeof obj[key] !== 'boolean') throw new Mismatch(`missing boolean field ${JSON.stringify(key)}`);
  return obj[key];
}

/** A permit count as the API takes it: a number. */
const permitsOf = (step) => Number(intField(step, 'permits'));

/** Doubles compared bit for bit (so 0 !== -0), every NaN equal to every other. */
const sameDouble = (a, b) => Object.is(a, b);

const show = (x) => (Object.is(x, -0) ? '-0.0' : String(x));

/** Whether `error` is the binding's invalid-argument error. */
const isInvalidArgument = (error) => error instanceof RangeError && error.code === codes.invalidArgument;

const describeError = (error) =>
  `${error?.constructor?.name ?? typeof error}${error?.code ? ` [${error.code}]` : ''}: ${error?.message ?? error}`;

function create(spec, clock) {
  switch (spec.algorithm) {
    case 'smooth_bursty': {
      const rate = doubleField(spec, 'permits_per_second');
      return () => RateLimiter.create(rate, { maxBurstSeconds: doubleField(spec, 'max_burst_seconds'), clock });
    }
    case 'smooth_warming_up': {
      const rate = doubleField(spec, 'permits_per_second');
      return () =>
        RateLimiter.create(rate, {
          warmupMicros: intField(spec, 'warmup_micros'),
          coldFactor: doubleField(spec, 'cold_factor'),
          clock,
        });
    }
    default:
      throw new Mismatch(`unsupported algorithm ${JSON.stringify(spec.algorithm)}`);
  }
}

/** Runs one step; returns nothing when it matched, throws Mismatch otherwise. */
async function runStep(limiter, clock, step) {
  const expectsError = step.error;
  let actual; // what the call gave, when it gave something other than expected
  try {
    switch (step.op) {
      case 'sleep': {
        // The Rust clock ignores negative moves; ManualClock refuses them.
        const micros = intField(step, 'micros');
        if (micros > 0n) clock.advanceMicros(micros);
        return;
      }
      case 'acquire': {
        const expected = expectsError === undefined ? intField(step, 'wait_micros') : undefined;
        const before = clock.nowMicros;
        const seconds = await limiter.acquire(permitsOf(step));
        // The exact wait is what the clock moved by; the resolved value must
        // be Guava's double for it.
        const waited = clock.nowMicros - before;
        if (waited === expected && sameDouble(seconds, Number(expected) / 1e6)) return;
        actual = waited === expected ? `seconds ${seconds}` : `wait_micros ${waited}`;
        break;
      }
      case 'try_acquire': {
        const expected = expectsError === undefined ? boolField(step, 'acquired') : undefined;
        const timeout = intField(step, 'timeout_micros');
        // A timeout of 0 or less (Guava: "do not wait") takes the synchronous
        // path; a longer one the Promise with the exact microseconds.
        const acquired =
          timeout <= 0n
            ? limiter.tryAcquire(permitsOf(step))
            : await limiter.tryAcquire(permitsOf(step), { timeoutMicros: timeout });
        if (acquired === expected) return;
        actual = `acquired ${acquired}`;
        break;
      }
      case 'set_rate':
        limiter.rate = doubleField(step, 'permits_per_second');
        if (expectsError === undefined) return;
        actual = 'ok';
        break;
      case 'get_rate': {
        const expected = doubleField(step, 'permits_per_second');
        const rate = limiter.rate;
        if (sameDouble(rate, expected)) return;
        throw new Mismatch(`expected permits_per_second ${show(expected)}, got ${show(rate)}`);
      }
      default:
        throw new Mismatch(`unknown op ${JSON.stringify(step.op)}`);
    }
  } catch (error) {
    if (error instanceof Mismatch) throw error;
    if (expectsError === 'invalid_argument' && isInvalidArgument(error)) return;
    if (expectsError !== undefined) {
      throw new Mismatch(`expected error ${expectsError}, got error: ${describeError(error)}`);
    }
    throw new Mismatch(`expected ${expectedValue(step)}, got error: ${describeError(error)}`);
  }
  if (expectsError !== undefined) throw new Mismatch(`expected error ${expectsError}, got ${actual}`);
  throw new Mismatch(`expected ${expectedValue(step)}, got ${actual}`);
}

function expectedValue(step) {
  for (const key of ['wait_micros', 'acquired', 'permits_per_second']) {
    if (key in step) return `${key} ${JSON.stringify(step[key])}`;
  }
  return 'success';
}

function describeStep(step) {
  const parts = [];
  for (const [k, v] of Object.entries(step)) {
    if (['wait_micros', 'acquired', 'error'].includes(k)) continue;
    parts.push(k === 'op' ? String(v) : `${k}=${JSON.stringify(v)}`);
  }
  return `(${parts.join(' ')})`;
}

/** Runs one case: `undefined` when it passed, else what differed first. */
async function runCase(c) {
  try {
    if (!c.limiter) throw new Mismatch('case has no "limiter"');
    const clock = new ManualClock();
    const make = create(c.limiter, clock);
    if ('create_error' in c) {
      try {
        make();
      } catch (error) {
        if (c.create_error === 'invalid_argument' && isInvalidArgument(error)) return undefined;
        return `create: expected error ${c.create_error}, got error ${describeError(error)}`;
      }
      return `create: expected error ${c.create_error}, got a limiter`;
    }
    let limiter;
    try {
      limiter = make();
    } catch (error) {
      return `create: expected a limiter, got error: ${describeError(error)}`;
    }
    if (!Array.isArray(c.steps)) throw new Mismatch('case has no "steps"');
    for (const [i, step] of c.steps.entries()) {
      try {
        await runStep(limiter, clock, step);
      } catch (error) {
        if (error instanceof Mismatch) return `step ${i} ${describeStep(step)}: ${error.message}`;
        throw error;
      }
    }
    return undefined;
  } catch (error) {
    if (error instanceof Mismatch) return error.message;
    return `runner error: ${describeError(error)}`;
  }
}

const args = process.argv.slice(2);
if (args.length === 0) {
  console.error('usage: node tests/conformance/node/run.mjs PATH...');
  process.exit(2);
}
let files;
try {
  files = collectFiles(args);
} catch (error) {
  console.error(`error: ${error.message}`);
  process.exit(2);
}
let passed = 0;
let failed = 0;
let unreadable = false;
for (const file of files) {
  let doc;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
    if (doc.format !== FORMAT) throw new Error(`format is ${JSON.stringify(doc.format)}, expected "${FORMAT}"`);
    if (!Array.isArray(doc.cases)) throw new Error('no "cases" array');
  } catch (error) {
    console.error(`error: ${file}: ${error.message}`);
    unreadable = true;
    continue;
  }
  for (const [i, c] of doc.cases.entries()) {
    const failure = await runCase(c);
    if (failure === undefined) passed++;
    else {
      failed++;
      console.log(`FAIL ${file}: ${c.name ?? `case #${i}`}: ${failure}`);
    }
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = unreadable ? 2 : failed > 0 ? 1 : 0;
