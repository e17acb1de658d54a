// The Node.js runner of the cross-language conformance suite.
//
//   node tests/conformance/node/run.mjs PATH...   (normally: tests/conformance/run node)
//
// Reads vector files in the `ratelimit-conformance/1` format
// (tests/conformance/FORMAT.md) and replays every case through the public
// API of the npm package in node/ on a ManualClock, exactly as the Rust
// runner (tests/conformance/rust/src/) replays them through the crate:
// the clock moves only by `sleep` steps and by the waits that successful
// acquires (and token bucket waits, queue acquires) make — waiting on a
// ManualClock advances it. Every algorithm: Guava's RateLimiter, the token
// bucket, the other admission-style limiters, the markers, the concurrency
// limiter and its policies, the load-driven limiters (BBR and Sentinel's
// system rule, on a ManualLoad), the composite; one function per family
// below.
//
// Prints one line per failing case (the first step that differed, expected
// and actual) and a last line "N passed, N failed" (", N skipped" added when
// some cases' `skip` names node); exits 1 when a case failed, 2 on
// unreadable input.
//
// Every expected error is checked in full (FORMAT.md, "Errors and bad
// inputs"): its class and `code`, the `argument` it names in JavaScript's
// spelling (camelCase, a duration with the unit of the option passed), and
// the text its message must contain.
//
// Numbers: integers arrive as JSON numbers or, beyond 2^53 - 1, as decimal
// strings; both are read exactly, as bigints, and reach the binding without
// loss: counts and microseconds go in as numbers when a double holds them
// and as bigints beyond (every count and `…Micros` option takes both), and
// a decision's durations are compared through its exact `…Micros` getters.
// Permit counts are numbers in the API (Guava's `int`): one beyond 2^53 is
// out of range however it is rounded. Doubles are JSON numbers (V8's parser
// rounds correctly) or the strings "NaN", "Infinity", "-Infinity".
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
// RATEKEEPER_NODE_PACKAGE=DIR replays through the package installed in DIR
// (node_modules/ratekeeper of a project: tests/installed/node.sh) instead.
const packageDir = process.env.RATEKEEPER_NODE_PACKAGE || path.join(here, '..', '..', '..', 'node');
const rk = await import(pathToFileURL(path.join(packageDir, 'index.mjs')).href);
const { RateLimiter, ManualClock, codes } = rk;

const FORMAT = 'ratelimit-conformance/1';

/** This runner's name in a case's `skip`. */
const LANGUAGE = 'node';

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

/** Whether `obj` lists `key` in `raw`: a value of the wrong type, passed as it is. */
const isRaw = (obj, key) => Array.isArray(obj.raw) && obj.raw.includes(key);

/** A signed 64-bit integer field (wider for a duration's microseconds, `bits`), exactly, as a bigint. */
function intField(obj, key, bits = 64n) {
  const v = obj[key];
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v)) {
    const n = BigInt(v);
    if (n >= -(2n ** (bits - 1n)) && n < 2n ** (bits - 1n)) return n;
  }
  throw new Mismatch(`field ${JSON.stringify(key)} = ${JSON.stringify(v)} is not a ${bits}-bit integer`);
}

/** A double field: a JSON number or one of the special strings (a raw field: its JSON value). */
function doubleField(obj, key) {
  if (isRaw(obj, key)) return obj[key];
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

/** An integer as a user passes it: a number when a double holds it, else a bigint. */
const asArg = (n) => (n >= -(2n ** 53n - 1n) && n <= 2n ** 53n - 1n ? Number(n) : n);

/** An integer field as a user passes it (a raw field: its JSON value). */
const argField = (obj, key) => (isRaw(obj, key) ? obj[key] : asArg(intField(obj, key)));

/**
 * A duration as options: `<name>_seconds` as `<option>Ms` (× 1000; a raw
 * field as it is), else `<name>_micros` as `<option>Micros` (a number, or a
 * bigint beyond 2^53, up to 2^64 for the vectors beyond 64 bits).
 */
function durationOption(obj, name, option) {
  const seconds = `${name}_seconds`;
  if (seconds in obj) return { [`${option}Ms`]: isRaw(obj, seconds) ? obj[seconds] : doubleField(obj, seconds) * 1000 };
  return { [`${option}Micros`]: asArg(intField(obj, `${name}_micros`, 65n)) };
}

const camelCase = (name) => name.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

/**
 * The name JavaScript gives the library's argument `name` (FORMAT.md):
 * camelCase, and a duration with the unit of the option the runner passed,
 * found in `fields` (the limiter's or step's).
 */
function jsArgument(name, fields) {
  if (name === 'policy_name') return 'name';
  if (name === 'seconds') return 'micros' in fields ? 'micros' : 'ms';
  if (`${name}_seconds` in fields) return `${camelCase(name)}Ms`;
  if (`${name}_micros` in fields) return `${camelCase(name)}Micros`;
  return camelCase(name);
}

/** The classes and codes of the kinds of expected errors. */
const ERROR_KINDS = {
  invalid_argument: (error) => error instanceof RangeError && error.code === codes.invalidArgument,
  argument_type: (error) => error instanceof TypeError && error.code === codes.invalidArgType,
};

/**
 * Checks `error` against the expected error of a case (`create_error`) or
 * a step (`error`): its kind, the argument it names (a composite's part's as
 * `limits[i].name`) and the text its message must contain. `fields` holds
 * the fields whose units name a duration.
 */
function checkError(expected, kindKey, error, fields) {
  if (error instanceof Mismatch) throw error;
  const kind = expected[kindKey];
  const isKind = ERROR_KINDS[kind];
  if (!isKind) throw new Mismatch(`unknown error kind ${JSON.stringify(kind)}`);
  if (!isKind(error)) throw new Mismatch(`expected error ${kind}, got error: ${describeError(error)}`);
  if (expected.argument !== undefined) {
    const want = jsArgument(expected.argument, fields);
    const got = String(error.argument).replace(/^limits\[\d+\]\./, '');
    if (got !== want) throw new Mismatch(`expected an error naming ${want}, got one naming ${error.argument}: ${error.message}`);
  }
  const text = expected.message_contains;
  if (text !== undefined && !String(error.message).includes(text)) {
    throw new Mismatch(`expected an error whose message contains ${JSON.stringify(text)}, got: ${error.message}`);
  }
}

const NEVER = 9223372036854775807n;

/** Doubles compared bit for bit (so 0 !== -0), every NaN equal to every other. */
const sameDouble = (a, b) => Object.is(a, b);

const show = (x) => (Object.is(x, -0) ? '-0.0' : String(x));

const describeError = (error) =>
  `${error?.constructor?.name ?? typeof error}${error?.code ? ` [${error.code}]` : ''}: ${error?.message ?? error}`;

/** Guava's RateLimiter: a maker of the limiter, and `runStep` for its steps. */
function guava(spec, clock) {
  const make = guavaMaker(spec, clock);
  return { make, step: (limiter, step) => runStep(limiter, clock, step) };
}

function guavaMaker(spec, clock) {
  switch (spec.algorithm) {
    case 'smooth_bursty': {
      const rate = doubleField(spec, 'permits_per_second');
      return () => RateLimiter.create(rate, { maxBurstSeconds: doubleField(spec, 'max_burst_seconds'), clock });
    }
    case 'smooth_warming_up': {
      const rate = doubleField(spec, 'permits_per_second');
      return () =>
        RateLimiter.create(rate, {
          ...durationOption(spec, 'warmup', 'warmup'),
          coldFactor: doubleField(spec, 'cold_factor'),
          clock,
        });
    }
    default:
      // Every other registered algorithm, through check and peek.
      if (ALGORITHMS.has(spec.algorithm)) return admission(spec, clock);
      throw new Mismatch(`unsupported algorithm ${JSON.stringify(spec.algorithm)}`);
  }
}

/** Runs one Guava step; returns nothing when it matched, throws Mismatch otherwise. */
async function runStep(limiter, clock, step) {
  const expectsError = step.error;
  let actual; // what the call gave, when it gave something other than expected
  try {
    switch (step.op) {
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
        // A timeout of 0 or less (Guava: "do not wait") takes the synchronous
        // path; a longer one the Promise with the exact microseconds. One in
        // seconds goes in milliseconds (a Promise, or a boolean at once).
        const timeout = 'timeout_seconds' in step ? undefined : intField(step, 'timeout_micros');
        const acquired =
          timeout === undefined
            ? await limiter.tryAcquire(permitsOf(step), durationOption(step, 'timeout', 'timeout'))
            : timeout <= 0n
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
    if (expectsError !== undefined) return checkError(step, 'error', error, step);
    throw new Mismatch(`expected ${expectedValue(step)}, got error: ${describeError(error)}`);
  }
  if (expectsError !== undefined) throw new Mismatch(`expected error ${expectsError}, got ${actual}`);
  throw new Mismatch(`expected ${expectedValue(step)}, got ${actual}`);
}

// ---------------------------------------------------------------------------
// The algorithms of vectors/algorithms/ (FORMAT.md, "Algorithm vectors").

/**
 * Runs a call that a step may expect to fail (`"error": "invalid_argument"`):
 * an expected error must be the binding's invalid-argument error; otherwise
 * the call must succeed and `compare` judges its value (throwing Mismatch).
 */
async function expect(step, call, compare = () => {}) {
  let value;
  try {
    value = await call();
  } catch (error) {
    if (error instanceof Mismatch) throw error;
    if (step.error !== undefined) return checkError(step, 'error', error, step);
    throw new Mismatch(`expected success, got error: ${describeError(error)}`);
  }
  if (step.error !== undefined) throw new Mismatch(`expected error ${step.error}, got success`);
  compare(value);
}

function expectEq(what, expected, actual) {
  if (expected !== actual) throw new Mismatch(`expected ${what} ${show(expected)}, got ${show(actual)}`);
}

/** A step's expected `decision` object, as exact integers. */
function decisionField(obj, key = 'decision') {
  const d = obj[key];
  if (typeof d !== 'object' || d === null) throw new Mismatch(`missing decision field ${JSON.stringify(key)}`);
  return {
    allowed: boolField(d, 'allowed'),
    limit: intField(d, 'limit'),
    remaining: intField(d, 'remaining'),
    retry_after_micros: intField(d, 'retry_after_micros'),
    reset_after_micros: intField(d, 'reset_after_micros'),
    wait_micros: intField(d, 'wait_micros'),
    window_micros: intField(d, 'window_micros'),
  };
}

/** Milliseconds as a Decision gives them for exact microseconds. */
const msOf = (micros) => (micros === NEVER ? Infinity : Number(micros) / 1000);

/**
 * Compares a Decision with an expected one, every field: the counts, the
 * exact microseconds, and the milliseconds they must agree with.
 */
function expectDecision(expected, d, what = 'decision') {
  if (!(d instanceof rk.Decision)) throw new Mismatch(`${what} is not a Decision: ${d}`);
  const actual = {
    allowed: d.allowed,
    limit: Number.isInteger(d.limit) ? BigInt(d.limit) : d.limit,
    remaining: Number.isInteger(d.remaining) ? BigInt(d.remaining) : d.remaining,
    retry_after_micros: d.retryAfterMicros,
    reset_after_micros: d.resetAfterMicros,
    wait_micros: d.waitMicros,
    window_micros: d.windowMicros,
  };
  const diffs = Object.keys(expected)
    .filter((k) => expected[k] !== actual[k])
    .map((k) => `${k}: expected ${expected[k]}, got ${actual[k]}`);
  const ms = { retryAfterMs: 'retry_after_micros', resetAfterMs: 'reset_after_micros', waitMs: 'wait_micros', windowMs: 'window_micros' };
  for (const [field, micros] of Object.entries(ms)) {
    if (!Object.is(d[field], msOf(expected[micros]))) diffs.push(`${field}: expected ${msOf(expected[micros])}, got ${d[field]}`);
  }
  if (diffs.length > 0) throw new Mismatch(`${what} differs: ${diffs.join('; ')}`);
}

/** The `sleep` step every family shares (ManualClock refuses negative moves; the Rust clock ignores them). */
function sleep(clock, step) {
  const micros = intField(step, 'micros');
  if (micros > 0n) clock.advanceMicros(micros);
}

/**
 * ratekeeper-core's registry of the admission-style algorithms, as the
 * vector generator writes it (tests/conformance/algorithms.json), by wire
 * name: each one's class and parameters.
 */
const ALGORITHMS = new Map(
  JSON.parse(readFileSync(path.join(here, '..', 'algorithms.json'), 'utf8')).algorithms.map((a) => [a.wire_name, a]),
);

/**
 * The options of an admission-style `limiter` object, as its class (and a
 * composite's part) takes them: the registry's parameters in camelCase, a
 * duration in milliseconds or microseconds as the vector gives it, one with
 * a default only when the vector gives it.
 */
function admissionOptions(spec) {
  const algorithm = ALGORITHMS.get(spec.algorithm);
  if (algorithm === undefined) throw new Mismatch(`${JSON.stringify(spec.algorithm)} is not an admission-style algorithm`);
  const options = { algorithm: camelCase(algorithm.wire_name) };
  for (const { name, wire_name: field, kind, default: fallback } of algorithm.parameters) {
    // Left out by the vector, a parameter with a default is left out here too.
    if (fallback !== undefined && !(field in spec)) continue;
    if (kind === 'rate') options[camelCase(name)] = doubleField(spec, field);
    else if (kind === 'count') options[camelCase(name)] = argField(spec, field);
    else Object.assign(options, durationOption(spec, name, camelCase(name)));
  }
  return options;
}

/** Each algorithm's class, by the name `admissionOptions` gives it. */
const CLASSES = Object.fromEntries(
  [...ALGORITHMS.values()].map((a) => [camelCase(a.wire_name), rk[a.display_name]]),
);

/** `check` and `peek`, the ops every admission-style limiter (and the composite) has. */
async function admissionStep(limiter, step) {
  switch (step.op) {
    case 'check':
      return expect(step, () => limiter.check(argField(step, 'cost')), (d) => expectDecision(decisionField(step), d));
    case 'peek':
      return expect(step, () => limiter.peek(argField(step, 'cost')), (d) => expectDecision(decisionField(step), d));
    case 'policy_header':
      return expect(step, () => limiter.peek(0).headers(step.policy_name));
    case 'set_limit':
      if (!(limiter instanceof rk.FixedWindow || limiter instanceof rk.SlidingWindow || limiter instanceof rk.SlidingLog || limiter instanceof rk.SlidingWindowCounter)) {
        throw new Mismatch(`set_limit on ${limiter}`);
      }
      return expect(step, () => {
        limiter.limit = argField(step, 'limit');
      });
    default:
      throw new Mismatch(`unknown op ${JSON.stringify(step.op)}`);
  }
}

/** The admission-style algorithms without extras, through their classes. */
function admission(spec, clock) {
  const { algorithm, ...options } = admissionOptions(spec);
  return { make: () => new CLASSES[algorithm]({ ...options, clock }), step: admissionStep };
}

/** `token_bucket`: Go's x/time/rate, with its reservations kept in order for `cancel`. */
function tokenBucket(spec, clock) {
  const { algorithm, ...options } = admissionOptions(spec);
  const reservations = [];
  return {
    make: () => new rk.TokenBucket({ ...options, clock }),
    async step(bucket, step) {
      switch (step.op) {
        case 'allow':
          return expect(step, () => bucket.tryAcquire(argField(step, 'n')), (a) => expectEq('allowed', boolField(step, 'allowed'), a));
        case 'reserve':
          return expect(step, () => bucket.reserve(argField(step, 'n')), (r) => {
            reservations.push(r);
            const ok = boolField(step, 'ok');
            expectEq('ok', ok, r.ok);
            if (ok) expectEq('delay_micros', intField(step, 'delay_micros'), r.delayMicros());
          });
        case 'cancel': {
          const r = reservations[Number(intField(step, 'reservation'))];
          if (!r) throw new Mismatch(`no reservation #${step.reservation}`);
          return r.cancel();
        }
        case 'wait':
          // On a ManualClock the wait advances the clock by the delay.
          return expect(
            step,
            () => bucket.wait(argField(step, 'n'), { timeoutMicros: argField(step, 'timeout_micros') }),
            (d) => {
              const ok = boolField(step, 'ok');
              expectEq('ok', ok, d.allowed);
              if (ok) expectEq('delay_micros', intField(step, 'delay_micros'), d.waitMicros);
            },
          );
        case 'set_rate':
          return expect(step, () => {
            bucket.rate = doubleField(step, 'rate');
          });
        case 'set_burst':
          return expect(step, () => {
            bucket.burst = argField(step, 'burst');
          });
        case 'tokens': {
          const expected = doubleField(step, 'tokens');
          const tokens = bucket.tokens();
          if (!sameDouble(expected, tokens)) throw new Mismatch(`expected tokens ${show(expected)}, got ${show(tokens)}`);
          return;
        }
        case 'rate': {
          const expected = doubleField(step, 'rate');
          if (!sameDouble(expected, bucket.rate)) throw new Mismatch(`expected rate ${show(expected)}, got ${show(bucket.rate)}`);
          return;
        }
        case 'burst':
          return expectEq('burst', intField(step, 'burst'), BigInt(bucket.burst));
        default:
          return admissionStep(bucket, step);
      }
    },
  };
}

/** `srtcm` and `trtcm`. */
function markers(spec, clock) {
  const n = (key) => argField(spec, key);
  const sr = spec.algorithm === 'srtcm';
  return {
    make: () =>
      sr
        ? new rk.SrTcm({ cir: n('cir'), cbs: n('cbs'), ebs: n('ebs'), clock })
        : new rk.TrTcm({ pir: n('pir'), pbs: n('pbs'), cir: n('cir'), cbs: n('cbs'), clock }),
    async step(marker, step) {
      switch (step.op) {
        case 'mark':
          return expect(step, () => marker.mark(argField(step, 'bytes')), (c) => expectEq('color', step.color, c));
        case 'mark_aware':
          return expect(
            step,
            () => marker.markAware(argField(step, 'bytes'), step.pre_color),
            (c) => expectEq('color', step.color, c),
          );
        case 'tokens': {
          const tokens = marker.tokens();
          for (const key of sr ? ['committed', 'excess'] : ['peak', 'committed']) {
            expectEq(key, intField(step, key), BigInt(tokens[key]));
          }
          return;
        }
        default:
          throw new Mismatch(`unknown op ${JSON.stringify(step.op)}`);
      }
    },
  };
}

/** A policy object as ConcurrencyLimiter's factories take it. */
function concurrencyMaker(policy, clock) {
  const n = (key) => argField(policy, key);
  switch (policy.algorithm) {
    case 'fixed':
      return () => rk.ConcurrencyLimiter.fixed(n('limit'), { clock });
    case 'gradient':
      return () =>
        rk.ConcurrencyLimiter.gradient({
          initialLimit: n('initial_limit'),
          minLimit: n('min_limit'),
          maxLimit: n('max_limit'),
          smoothing: doubleField(policy, 'smoothing'),
          rttTolerance: doubleField(policy, 'rtt_tolerance'),
          queueSize: n('queue_size'),
          backoffRatio: doubleField(policy, 'backoff_ratio'),
          probeInterval: n('probe_interval'),
          clock,
        });
    case 'aimd':
      return () =>
        rk.ConcurrencyLimiter.aimd({
          initialLimit: n('initial_limit'),
          minLimit: n('min_limit'),
          maxLimit: n('max_limit'),
          backoffRatio: doubleField(policy, 'backoff_ratio'),
          ...durationOption(policy, 'rtt_timeout', 'rttTimeout'),
          clock,
        });
    default:
      throw new Mismatch(`unknown policy ${JSON.stringify(policy.algorithm)}`);
  }
}

/** `gradient`, `aimd` (the policies alone, through `sample`) and `concurrency` (with permits). */
function concurrency(spec, clock) {
  const policy = spec.algorithm === 'concurrency' ? spec.policy : spec;
  if (typeof policy !== 'object' || policy === null) throw new Mismatch('no "policy"');
  const permits = [];
  return {
    make: concurrencyMaker(policy, clock),
    async step(limiter, step) {
      switch (step.op) {
        case 'sample':
          return expect(
            step,
            () =>
              limiter.sample({
                ...durationOption(step, 'rtt', 'rtt'),
                inFlight: argField(step, 'in_flight'),
                dropped: boolField(step, 'dropped'),
              }),
            (limit) => expectEq('limit', intField(step, 'limit'), BigInt(limit)),
          );
        case 'acquire': {
          const { decision, permit } = limiter.check();
          if (permit) permits.push(permit);
          expectEq('a permit', decision.allowed, permit !== undefined);
          return expectDecision(decisionField(step), decision);
        }
        case 'release': {
          const permit = permits[Number(intField(step, 'permit'))];
          if (!permit) throw new Mismatch(`no permit #${step.permit}`);
          return expectEq('limit', intField(step, 'limit'), BigInt(permit.release(step.outcome)));
        }
        case 'state':
          expectEq('limit', intField(step, 'limit'), BigInt(limiter.limit));
          return expectEq('in_flight', intField(step, 'in_flight'), BigInt(limiter.inFlight));
        default:
          throw new Mismatch(`unknown op ${JSON.stringify(step.op)}`);
      }
    },
  };
}

/**
 * `bbr` and `system_guard`: each reads a ManualLoad the runner makes
 * (unknown until a `load` step), and keeps every admitted acquire's permit
 * in order for `release`.
 */
function loadDriven(spec, clock) {
  const load = new rk.ManualLoad();
  const bbr = spec.algorithm === 'bbr';
  const permits = [];
  /** A system_guard threshold the vector gives (left out: not checked). */
  const optional = (key, read) => (key in spec ? read(spec, key) : undefined);
  const make = bbr
    ? () =>
        new rk.Bbr({
          windowMicros: argField(spec, 'window_micros'),
          buckets: argField(spec, 'buckets'),
          cpuThreshold: doubleField(spec, 'cpu_threshold'),
          coolDownMicros: argField(spec, 'cool_down_micros'),
          load,
          clock,
        })
    : () =>
        new rk.SystemGuard({
          qps: optional('qps', doubleField),
          maxThread: optional('max_thread', argField),
          avgRtMicros: optional('avg_rt_micros', argField),
          highestSystemLoad: optional('highest_system_load', doubleField),
          highestCpuUsage: optional('highest_cpu_usage', doubleField),
          load,
          clock,
        });
  /** The stats fields of the vectors, by the camelCase names of `stats()`. */
  const STATS = bbr
    ? { in_flight: 'inFlight', max_pass: 'maxPass', min_rt_millis: 'minRtMs', max_in_flight: 'maxInFlight' }
    : {
        pass_qps: 'passQps',
        block_qps: 'blockQps',
        success_qps: 'successQps',
        in_flight: 'inFlight',
        avg_rt_millis: 'avgRtMs',
        min_rt_millis: 'minRtMs',
        max_success_qps: 'maxSuccessQps',
      };
  const DOUBLES = new Set(['pass_qps', 'block_qps', 'success_qps', 'avg_rt_millis', 'max_success_qps']);
  return {
    make,
    async step(limiter, step) {
      switch (step.op) {
        case 'load':
          return expect(step, () => {
            if ('cpu_usage' in step) load.setCpuUsage(doubleField(step, 'cpu_usage'));
            if ('load_average' in step) load.setLoadAverage(doubleField(step, 'load_average'));
          });
        case 'acquire': {
          const result = bbr ? limiter.check() : limiter.check(argField(step, 'count'));
          const { decision, permit } = result;
          if (permit) permits.push(permit);
          expectEq('a permit', decision.allowed, permit !== undefined);
          if (!bbr) expectEq('threshold', step.threshold ?? undefined, result.threshold);
          return expectDecision(decisionField(step), decision);
        }
        case 'release': {
          const permit = permits[Number(intField(step, 'permit'))];
          if (!permit) throw new Mismatch(`no permit #${step.permit}`);
          return permit.release();
        }
        case 'stats': {
          const stats = limiter.stats();
          for (const [field, name] of Object.entries(STATS)) {
            if (DOUBLES.has(field)) {
              const expected = doubleField(step, field);
              if (!sameDouble(expected, stats[name])) throw new Mismatch(`expected ${field} ${show(expected)}, got ${show(stats[name])}`);
            } else {
              expectEq(field, intField(step, field), BigInt(stats[name]));
            }
          }
          return;
        }
        default:
          throw new Mismatch(`unknown op ${JSON.stringify(step.op)}`);
      }
    },
  };
}

/**
 * `cycle`: Resilience4j's limiter, through the calls that do not wait
 * (`check`, `checkNow`, `reservePermission`), so that the clock moves only
 * by `sleep` steps; milliseconds are compared to the microsecond.
 */
function cycle(spec, clock) {
  /** Milliseconds as exact microseconds (below 2^51 µs they round-trip). */
  const micros = (ms) => BigInt(Math.round(ms * 1000));
  return {
    make: () =>
      new rk.CycleLimiter({
        limitForPeriod: argField(spec, 'limit_for_period'),
        ...durationOption(spec, 'limit_refresh_period', 'limitRefreshPeriod'),
        ...durationOption(spec, 'timeout_duration', 'timeoutDuration'),
        clock,
      }),
    async step(limiter, step) {
      switch (step.op) {
        case 'acquire':
          return expect(step, () => limiter.check(argField(step, 'permits')), (d) => expectDecision(decisionField(step), d));
        case 'try_acquire':
          return expect(step, () => limiter.checkNow(argField(step, 'permits')), (d) =>
            expectDecision(decisionField(step), d),
          );
        case 'reserve':
          return expect(step, () => limiter.reservePermission(argField(step, 'permits')), (ms) =>
            expectEq('wait_micros', step.wait_micros === null ? undefined : intField(step, 'wait_micros'), ms === undefined ? undefined : micros(ms)),
          );
        case 'change_limit':
          return expect(step, () => limiter.changeLimitForPeriod(argField(step, 'limit_for_period')));
        case 'change_timeout':
          return expect(step, () => limiter.changeTimeoutDurationMicros(asArg(intField(step, 'timeout_duration_micros', 65n))));
        case 'drain':
          return expect(step, () => limiter.drainPermissions(), (n) => expectEq('drained', intField(step, 'drained'), BigInt(n)));
        case 'metrics':
          return expect(step, () => limiter.metrics(), (m) => {
            expectEq('available_permissions', intField(step, 'available_permissions'), BigInt(m.availablePermissions));
            expectEq('micros_to_wait', intField(step, 'micros_to_wait'), micros(m.timeToWaitMs));
            expectEq('cycle', intField(step, 'cycle'), BigInt(m.cycle));
          });
        default:
          throw new Mismatch(`unknown op ${JSON.stringify(step.op)}`);
      }
    },
  };
}

/** A `flow` rule from a limiter's or a `set_rule` step's fields, as a user writes one (names in camelCase). */
function flowRule(fields) {
  const rule = { count: doubleField(fields, 'count') };
  if ('grade' in fields) rule.grade = fields.grade;
  if ('control_behavior' in fields) rule.controlBehavior = camelCase(String(fields.control_behavior));
  for (const key of ['warm_up_period_sec', 'cold_factor', 'max_queueing_time_ms']) {
    if (key in fields) rule[camelCase(key)] = argField(fields, key);
  }
  return rule;
}

/**
 * `flow`: a FlowController on the case's clock. `check` decides without
 * waiting; the permits of admitted checks are kept in order for `release`.
 */
function flow(spec, clock) {
  const permits = [];
  const STATS = {
    pass_qps: 'passQps',
    block_qps: 'blockQps',
    success_qps: 'successQps',
    previous_pass_qps: 'previousPassQps',
    avg_rt_millis: 'avgRtMs',
    occupied_pass: 'occupiedPass',
    waiting: 'waiting',
    in_flight: 'inFlight',
  };
  const DOUBLES = new Set(['pass_qps', 'block_qps', 'success_qps', 'previous_pass_qps', 'avg_rt_millis']);
  return {
    make: () =>
      new rk.FlowController({
        rule: flowRule(spec),
        sampleCount: argField(spec, 'sample_count'),
        intervalMs: argField(spec, 'interval_ms'),
        clock,
      }),
    async step(limiter, step) {
      switch (step.op) {
        case 'check':
          return expect(
            step,
            () => limiter.check(argField(step, 'acquire_count'), boolField(step, 'prioritized')),
            ({ decision, permit }) => {
              if (permit) permits.push(permit);
              expectEq('a permit', decision.allowed, permit !== undefined);
              expectDecision(decisionField(step), decision);
            },
          );
        case 'release': {
          const permit = permits[Number(intField(step, 'permit'))];
          if (!permit) throw new Mismatch(`no permit #${step.permit}`);
          return limiter.release(permit);
        }
        case 'add_pass':
          return expect(step, () => limiter.addPass(argField(step, 'count')));
        case 'set_rule':
          return expect(step, () => limiter.setRule(flowRule(step)));
        case 'stats': {
          const stats = limiter.stats();
          for (const [field, name] of Object.entries(STATS)) {
            if (!(field in step)) continue;
            if (DOUBLES.has(field)) {
              const expected = doubleField(step, field);
              if (!sameDouble(expected, stats[name])) throw new Mismatch(`expected ${field} ${show(expected)}, got ${show(stats[name])}`);
            } else {
              expectEq(field, intField(step, field), BigInt(stats[name]));
            }
          }
          return;
        }
        default:
          throw new Mismatch(`unknown op ${JSON.stringify(step.op)}`);
      }
    },
  };
}

/** `composite`: its parts are option objects with the algorithm's name. */
function composite(spec, clock) {
  if (!Array.isArray(spec.limits)) throw new Mismatch('no "limits" array');
  const limits = spec.limits.map(admissionOptions);
  return {
    make: () => new rk.CompositeLimiter(limits, { clock }),
    async step(limiter, step) {
      if (step.op !== 'check') return admissionStep(limiter, step);
      return expect(step, () => limiter.checkEach(argField(step, 'cost')), ({ decision, parts }) => {
        expectDecision(decisionField(step), decision);
        if (!Array.isArray(step.parts)) throw new Mismatch('no "parts" array');
        expectEq('number of parts', step.parts.length, parts.length);
        step.parts.forEach((expected, i) => expectDecision(decisionField({ d: expected }, 'd'), parts[i], `part ${i}`));
      });
    },
  };
}

/** A step's key: `key` (text, or a raw value), `key_length` (that many `k`s) or `key_utf16` (code units). */
function keyOf(step) {
  if ('key_length' in step) return 'k'.repeat(Number(intField(step, 'key_length')));
  if ('key_utf16' in step) return String.fromCharCode(...step.key_utf16);
  if (isRaw(step, 'key') || typeof step.key === 'string') return step.key;
  throw new Mismatch('missing string field "key"');
}

/** `keyed`: a KeyedLimiter of copies of the template, its options as given. */
function keyed(spec, clock) {
  const options = { maxKeys: argField(spec, 'max_keys'), clock };
  if ('max_key_bytes' in spec) options.maxKeyBytes = argField(spec, 'max_key_bytes');
  if ('shards' in spec) options.shards = argField(spec, 'shards');
  return {
    make: () => new rk.KeyedLimiter(admissionOptions(spec.template), options),
    async step(limiter, step) {
      if (step.op !== 'check') throw new Mismatch(`unknown op ${JSON.stringify(step.op)}`);
      const key = keyOf(step);
      return expect(step, () => limiter.check(key, argField(step, 'cost')), (d) => expectDecision(decisionField(step), d));
    },
  };
}

/** `manual_clock`: the case's clock alone, moved by `advance` (`seconds` as milliseconds). */
function manualClock(clock) {
  return {
    make: () => clock,
    async step(c, step) {
      if (step.op !== 'advance') throw new Mismatch(`unknown op ${JSON.stringify(step.op)}`);
      return expect(step, () =>
        'micros' in step ? c.advanceMicros(argField(step, 'micros')) : c.advance(doubleField(step, 'seconds') * 1000),
      );
    },
  };
}

/** The family that replays `spec`'s algorithm. */
function create(spec, clock) {
  switch (spec.algorithm) {
    case 'smooth_bursty':
    case 'smooth_warming_up':
      return guava(spec, clock);
    case 'token_bucket':
      return tokenBucket(spec, clock);
    case 'srtcm':
    case 'trtcm':
      return markers(spec, clock);
    case 'gradient':
    case 'aimd':
    case 'concurrency':
      return concurrency(spec, clock);
    case 'bbr':
    case 'system_guard':
      return loadDriven(spec, clock);
    case 'flow':
      return flow(spec, clock);
    case 'cycle':
      return cycle(spec, clock);
    case 'composite':
      return composite(spec, clock);
    case 'keyed':
      return keyed(spec, clock);
    case 'manual_clock':
      return manualClock(clock);
    default:
      // Every other registered algorithm, through check and peek.
      if (ALGORITHMS.has(spec.algorithm)) return admission(spec, clock);
      throw new Mismatch(`unsupported algorithm ${JSON.stringify(spec.algorithm)}`);
  }
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
    if (['wait_micros', 'acquired', 'error', 'decision', 'parts', 'allowed', 'ok', 'delay_micros', 'tokens', 'color', 'limit', 'threshold'].includes(k)) continue;
    parts.push(k === 'op' ? String(v) : `${k}=${JSON.stringify(v)}`);
  }
  return `(${parts.join(' ')})`;
}

/** Runs one case: `undefined` when it passed, else what differed first. */
async function runCase(c) {
  try {
    if (!c.limiter) throw new Mismatch('case has no "limiter"');
    const clock = new ManualClock();
    const { make, step: replay } = create(c.limiter, clock);
    if ('create_error' in c) {
      try {
        make();
      } catch (error) {
        const fields = { ...c.limiter, ...(c.limiter.policy ?? {}), ...(c.limiter.template ?? {}) };
        try {
          checkError(c, 'create_error', error, fields);
        } catch (mismatch) {
          if (mismatch instanceof Mismatch) return `create: ${mismatch.message}`;
          throw mismatch;
        }
        return undefined;
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
        if (step.op === 'sleep') sleep(clock, step);
        else await replay(limiter, step);
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
let skipped = 0;
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
    if (c.skip && LANGUAGE in c.skip) {
      skipped++;
      continue;
    }
    const failure = await runCase(c);
    if (failure === undefined) passed++;
    else {
      failed++;
      console.log(`FAIL ${file}: ${c.name ?? `case #${i}`}: ${failure}`);
    }
  }
}
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exitCode = unreadable ? 2 : failed > 0 ? 1 : 0;
