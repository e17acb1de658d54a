#!/usr/bin/env bash
# Installs the npm packages in dist/ as a user does, with no Rust toolchain
# and no C compiler, in a new project outside the repository, and uses them:
#
#   tests/installed/node.sh      (after scripts/dist/node.sh; stage node-installed)
#
# 1. A new project installs the two tarballs of dist/ — the main package and
#    this machine's platform package — with `npm install --offline` and an
#    empty cache, its registry a local stub that records every request and
#    answers 404: npm needs nothing from any registry (the stub's log must
#    stay empty), the platform package comes from its tarball (the
#    lockfile's `resolved`), and the other platforms' optional packages are
#    skipped. Then, under tests/installed/without-toolchain: napi's loader
#    loads the .node of node_modules/ratekeeper-<platform> (with its check
#    that the two packages' versions agree turned on); `version()`,
#    package.json's version and the workspace's agree; the Node.js
#    conformance runner passes against the installed package; a CommonJS
#    script, an ES module script, and `tsc --noEmit` on a TypeScript file
#    that imports the package.
# 2. What npm does online: the same install, not offline, against the stub.
#    npm asks for the manifests of the platform packages (they are not
#    published), is told 404, skips those it has no tarball for, and still
#    takes the platform package from its tarball; it fetches no tarball.
# 3. The README's build from source: `npm install /path/to/ratekeeper/node`
#    (the folder, with the module `npm run build` left in node/lib) into
#    another project, which runs the same scripts.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
without_toolchain="$root/tests/installed/without-toolchain"
tsc="$root/node/node_modules/.bin/tsc"
[ -x "$tsc" ] || { echo "tests/installed/node.sh: TypeScript missing: npm ci in node/ (scripts/setup.sh)" >&2; exit 1; }

version="$(node -p "require('$root/node/package.json').version")"
workspace_version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version *= *"\(.*\)"/\1/p' "$root/Cargo.toml")"
# This machine's platform, in napi's spelling.
platform="$(node -p "
  const abi = process.platform === 'linux'
    ? (process.report.getReport().header.glibcVersionRuntime ? '-gnu' : '-musl')
    : process.platform === 'win32' ? '-msvc' : '';
  process.platform + '-' + process.arch + abi")"
main_tgz="$root/dist/ratekeeper-$version.tgz"
platform_tgz="$root/dist/ratekeeper-$platform-$version.tgz"
for f in "$main_tgz" "$platform_tgz"; do
  [ -f "$f" ] || { echo "tests/installed/node.sh: no $f: run scripts/dist/node.sh first" >&2; exit 1; }
done

work="$(mktemp -d)"
registry_pid=""
cleanup() {
  [ -z "$registry_pid" ] || kill "$registry_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
case "$work/" in "$root"/*) echo "tests/installed/node.sh: $work is inside the repository" >&2; exit 1 ;; esac

# The stub registry: every request logged, every answer 404.
cat >"$work/registry.mjs" <<'JS'
import { appendFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
const [log, portFile] = process.argv.slice(2);
writeFileSync(log, '');
const server = http.createServer((req, res) => {
  appendFileSync(log, `${req.method} ${decodeURIComponent(req.url ?? '')}\n`);
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end('{"error":"Not found"}');
});
server.listen(0, '127.0.0.1', () => writeFileSync(portFile, String(server.address().port)));
JS
node "$work/registry.mjs" "$work/requests.log" "$work/port" &
registry_pid=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "tests/installed/node.sh: the stub registry did not start" >&2; exit 1; }

export npm_config_registry="http://127.0.0.1:$(cat "$work/port")/"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
export npm_config_cache="$work/npm-cache"

new_project() { # $1: folder
  mkdir -p "$1"
  (cd "$1" && npm init -y >/dev/null)
}

# The lockfile's record of where a package came from.
resolved() { # $1: project, $2: package name
  node -p "require('$1/package-lock.json').packages['node_modules/$2']?.resolved ?? 'absent'"
}

write_uses() { # $1: project folder: the scripts a user would write
  cat >"$1/use.cjs" <<'JS'
const assert = require('node:assert/strict');
const { RateLimiter, ManualClock, Gcra, ConcurrencyLimiter, codes, version } = require('ratekeeper');
assert.equal(version(), require('ratekeeper/package.json').version);
const clock = new ManualClock();
const limiter = RateLimiter.create(2, { clock });
assert.equal(limiter.tryAcquire(), true);
assert.equal(limiter.tryAcquire(), false);
assert.equal(limiter.timeUntilAvailable(), 500);
assert.throws(() => limiter.tryAcquire(0), { name: 'RangeError', code: codes.invalidArgument });
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
  cat >"$1/use.mjs" <<'JS'
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import ratekeeper, { RateLimiter, ManualClock, version } from 'ratekeeper';
assert.equal(ratekeeper.RateLimiter, RateLimiter);
assert.equal(version(), createRequire(import.meta.url)('ratekeeper/package.json').version);
const clock = new ManualClock();
const limiter = RateLimiter.create(1, { clock });
const waits = [];
for (const permits of [1, 2, 3, 4, 5]) waits.push(await limiter.acquire(permits));
assert.deepEqual(waits, [0, 1, 2, 3, 4]);
assert.equal(clock.nowMicros, 10_000_000n);
console.log('  import: ok');
JS
  cat >"$1/use.ts" <<'TS'
import { RateLimiter, ManualClock, Gcra, version, type RateLimiterOptions } from 'ratekeeper';
const options: RateLimiterOptions = { warmupMs: 1000, clock: new ManualClock() };
const limiter: RateLimiter = RateLimiter.create(10, options);
const now: boolean = limiter.tryAcquire();
const later: Promise<boolean> = limiter.tryAcquire(1, { timeoutMs: 50 });
// @ts-expect-error: permits are numbers
limiter.tryAcquire('1');
const retry: number = new Gcra({ maxBurst: 4, countPerPeriod: 1, periodMs: 1000 }).check().retryAfterMs;
const release: string = version();
export { now, later, retry, release };
TS
  cat >"$1/tsconfig.json" <<'JSON'
{ "compilerOptions": { "strict": true, "noEmit": true, "module": "node16", "moduleResolution": "node16", "target": "es2022", "types": [] }, "files": ["use.ts"] }
JSON
}
run_uses() { # $1: project folder, then the command to run them under
  local project="$1"
  shift
  "$@" bash -c 'cd "$1" && node use.cjs && node use.mjs && "$2" -p tsconfig.json && echo "  tsc --noEmit: ok"' _ "$project" "$tsc"
}

echo "1. a new project installs dist/'s two tarballs, offline:"
app="$work/app"
new_project "$app"
(cd "$app" && npm install --offline --silent "$main_tgz" "$platform_tgz")
if [ -s "$work/requests.log" ]; then
  echo "npm asked a registry for something:" >&2
  cat "$work/requests.log" >&2
  exit 1
fi
echo "  npm asked no registry for anything"
case "$(resolved "$app" "ratekeeper-$platform")" in
  file:*"ratekeeper-$platform-$version.tgz") echo "  ratekeeper-$platform: from its tarball" ;;
  *) echo "ratekeeper-$platform was not installed from $platform_tgz: $(resolved "$app" "ratekeeper-$platform")" >&2; exit 1 ;;
esac
others="$(cd "$app/node_modules" && find . -maxdepth 1 -name 'ratekeeper-*' ! -name "ratekeeper-$platform" | sort)"
[ -z "$others" ] || { echo "other platforms' packages installed: $others" >&2; exit 1; }
write_uses "$app"

cat >"$app/where.cjs" <<'JS'
// Which files napi's loader loaded, and which versions agree.
const assert = require('node:assert/strict');
const path = require('node:path');
const [platform, workspaceVersion] = process.argv.slice(2);
const ratekeeper = require('ratekeeper');
const packageDir = path.dirname(require.resolve('ratekeeper/package.json'));
const modules = Object.keys(require.cache).filter((file) => file.endsWith('.node'));
assert.deepEqual(modules, [path.join(__dirname, 'node_modules', `ratekeeper-${platform}`, `ratekeeper.${platform}.node`)]);
assert.equal(packageDir, path.join(__dirname, 'node_modules', 'ratekeeper'));
const { version } = require('ratekeeper/package.json');
assert.equal(ratekeeper.version(), version);
assert.equal(require(`ratekeeper-${platform}/package.json`).version, version);
assert.equal(version, workspaceVersion);
console.log(`  loaded ${path.relative(__dirname, modules[0])}; version() = ${version} = the workspace's`);
JS
echo "  with no Rust toolchain and no C compiler:"
"$without_toolchain" bash -c '
  set -euo pipefail
  cd "$1"
  NAPI_RS_ENFORCE_VERSION_CHECK=1 node where.cjs "$2" "$3"
  printf "  conformance: "
  RATEKEEPER_NODE_PACKAGE="$1/node_modules/ratekeeper" node "$4/tests/conformance/node/run.mjs" "$4/tests/conformance/vectors"
' _ "$app" "$platform" "$workspace_version" "$root"
run_uses "$app" "$without_toolchain"

echo "2. the same install online, against a registry that has no ratekeeper package:"
online="$work/online"
new_project "$online"
(cd "$online" && npm install --silent --prefer-online "$main_tgz" "$platform_tgz")
sort -u "$work/requests.log" | sed 's/^/  asked: /'
unexpected="$(grep -v -E "^GET /ratekeeper-(linux|darwin|win32)-[a-z0-9-]+$" "$work/requests.log" || true)"
[ -z "$unexpected" ] || { echo "npm asked the registry for more than the platform packages' manifests:" >&2; echo "$unexpected" >&2; exit 1; }
[[ "$(resolved "$online" "ratekeeper-$platform")" == file:* ]] || { echo "online, ratekeeper-$platform did not come from its tarball" >&2; exit 1; }
(cd "$online" && node -e "require('ratekeeper').version()" >/dev/null)
echo "  only the platform packages' manifests (404); ratekeeper-$platform from its tarball, and it loads"
: >"$work/requests.log"

echo "3. a project that installs the folder (npm install /path/to/node, the build from source):"
folder="$work/from-folder"
new_project "$folder"
(cd "$folder" && npm install --offline --silent "$root/node")
write_uses "$folder"
run_uses "$folder" env
echo "tests/installed/node.sh: ok"
