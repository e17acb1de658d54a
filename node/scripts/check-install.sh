#!/usr/bin/env bash
# Installs the package the way a user does, in throwaway projects, and uses it:
#
#   node/scripts/check-install.sh      (scripts/test.sh runs it; needs `npm run build` first)
#
# 1. `npm pack` → a tarball, installed into a new project with `npm install
#    ratekeeper-*.tgz`: the tarball must carry everything (JavaScript, the
#    native module, the declarations).
# 2. `npm install /path/to/node` (the README's command) into another.
# Each project then runs a CommonJS script, an ES module script, and tsc
# on a TypeScript file that imports the package.
set -euo pipefail
pkg="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

[ -f "$pkg/lib/ratekeeper.node" ] || { echo "check-install: build first (npm run build in node/)" >&2; exit 1; }
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

tarball="$(cd "$pkg" && npm pack --silent --pack-destination "$work" | tail -n 1)"
echo "packed $tarball:"
tar -tzf "$work/$tarball" | sed 's/^/  /'
tar -tzf "$work/$tarball" | grep -x 'package/lib/ratekeeper.node' >/dev/null || { echo "the tarball has no native module" >&2; exit 1; }

use_it() { # $1: project folder with ratekeeper installed
  local app="$1"
  cat >"$app/use.cjs" <<'JS'
const assert = require('node:assert/strict');
const { RateLimiter, ManualClock, codes } = require('ratekeeper');
const clock = new ManualClock();
const limiter = RateLimiter.create(2, { clock });
assert.equal(limiter.tryAcquire(), true);
assert.equal(limiter.tryAcquire(), false);
assert.equal(limiter.timeUntilAvailable(), 500);
assert.throws(() => limiter.tryAcquire(0), { name: 'RangeError', code: codes.invalidArgument });
const { Gcra, ConcurrencyLimiter } = require('ratekeeper');
const gcra = new Gcra({ maxBurst: 0, countPerPeriod: 1, periodMs: 1000, clock });
assert.equal(gcra.check().allowed, true);
assert.deepEqual(gcra.check().headers('api'), { 'RateLimit-Policy': '"api";q=1;w=1', RateLimit: '"api";r=0;t=1', 'Retry-After': '1' });
assert.equal(ConcurrencyLimiter.fixed(1).tryAcquire().success(), 1);
limiter.acquire(3).then(async (seconds) => {
  assert.equal(seconds, 0.5);
  assert.equal(clock.now, 500);
  const real = RateLimiter.create(20);
  real.tryAcquire();
  const start = Date.now();
  assert.equal(await real.tryAcquire(1, { timeoutMs: 1000 }), true);
  assert.ok(Date.now() - start >= 40);
  console.log('  require: ok');
});
JS
  cat >"$app/use.mjs" <<'JS'
import assert from 'node:assert/strict';
import ratekeeper, { RateLimiter, ManualClock } from 'ratekeeper';
assert.equal(ratekeeper.RateLimiter, RateLimiter);
const clock = new ManualClock();
const limiter = RateLimiter.create(1, { clock });
const waits = [];
for (const permits of [1, 2, 3, 4, 5]) waits.push(await limiter.acquire(permits));
assert.deepEqual(waits, [0, 1, 2, 3, 4]);
assert.equal(clock.nowMicros, 10_000_000n);
console.log('  import: ok');
JS
  cat >"$app/use.ts" <<'TS'
import { RateLimiter, ManualClock, Gcra, type RateLimiterOptions } from 'ratekeeper';
const options: RateLimiterOptions = { warmupMs: 1000, clock: new ManualClock() };
const limiter: RateLimiter = RateLimiter.create(10, options);
const now: boolean = limiter.tryAcquire();
const later: Promise<boolean> = limiter.tryAcquire(1, { timeoutMs: 50 });
// @ts-expect-error: permits are numbers
limiter.tryAcquire('1');
const retry: number = new Gcra({ maxBurst: 4, countPerPeriod: 1, periodMs: 1000 }).check().retryAfterMs;
export { now, later, retry };
TS
  cat >"$app/tsconfig.json" <<'JSON'
{ "compilerOptions": { "strict": true, "noEmit": true, "module": "node16", "moduleResolution": "node16", "target": "es2022", "types": [] }, "files": ["use.ts"] }
JSON
  (cd "$app" && node use.cjs && node use.mjs && "$pkg/node_modules/.bin/tsc" -p tsconfig.json && echo '  TypeScript: ok')
}

new_project() { # $1: folder
  mkdir -p "$1"
  (cd "$1" && npm init -y >/dev/null)
}

echo "a project that installs the tarball:"
new_project "$work/from-tarball"
(cd "$work/from-tarball" && npm install --silent "$work/$tarball")
use_it "$work/from-tarball"

echo "a project that installs the folder (npm install ./node):"
new_project "$work/from-folder"
(cd "$work/from-folder" && npm install --silent "$pkg")
use_it "$work/from-folder"
echo "check-install: ok"
