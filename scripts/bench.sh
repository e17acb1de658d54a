#!/usr/bin/env bash
# Every benchmark of the project in one run, then one report: `make bench`
# runs this and writes BENCHMARKS.md (the README links it).
#
#   scripts/bench.sh           the full run, about six minutes on 2 cores
#                              plus builds; writes BENCHMARKS.md
#   scripts/bench.sh --quick   short runs and rough figures in about three
#                              minutes; writes target/bench/BENCHMARKS-quick.md
#
# Each suite runs beside its peers and writes its results, as JSON, into
# target/bench/results/ (its output goes to target/bench/results/logs/):
#
#   Rust     benches/rust: `ratios` (interleaved, beside governor; RATIO_JSON),
#            then every other bench target of the benches/ packages, found
#            with cargo metadata (criterion writes JSON under CRITERION_HOME);
#            RATIO_ROUNDS, RATIO_MILLIS still tune `ratios`
#   C        benches/c: rk_rate_limiter_try_acquire() through the C ABI
#   Python   benches/python/run, beside limits, pyrate-limiter, token-bucket,
#            ratelimit (pyperf; PYTHON_BENCH_ARGS adds options)
#   Node.js  benches/node, beside limiter and rate-limiter-flexible
#   Java     benches/java: Guava's own RateLimiter.tryAcquire(), from its jar
#   Redis    benches/redis/run, when it exists: run as
#            `benches/redis/run --json FILE [--quick]`, writing
#            ratekeeper-bench/1 JSON (see benches/report.py)
#   HTTP     benches/http/{tower,python,node}: the middleware under real
#            HTTP load (wrk, autocannon) beside tower-governor, slowapi,
#            Flask-Limiter, express-rate-limit and @fastify/rate-limit,
#            each writing ratekeeper-bench/1 JSON (--json FILE)
#   Install  benches/install/run after `scripts/dist.sh python node c`:
#            the artifacts' sizes, and cold import times beside limits and
#            rate-limiter-flexible
#
# then benches/report.py turns them into the Markdown report, with the
# machine (cores, CPU, memory) and the date. A suite that fails is named in
# the report and makes the script fail, after the others have run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

quick=false
[ "${1:-}" = "--quick" ] && quick=true

results="target/bench/results"
logs="$results/logs"
rm -rf "$results"
mkdir -p "$logs"
$quick && touch "$results/quick"
started=$SECONDS

step() { echo; echo "=== $*"; }
# suite NAME COMMAND...: runs it with its output in the log (and on the
# terminal); a failure is recorded and the run goes on.
suite() {
  local name="$1"
  shift
  local t0=$SECONDS
  if "$@" 2>&1 | tee "$logs/$name.txt"; then
    echo "($name: $((SECONDS - t0)) s)"
  else
    echo "$name failed: see $logs/$name.txt" | tee -a "$results/failed.txt" >&2
  fi
}

step "setup"
scripts/setup.sh
python3 benches/report.py machine >"$results/machine.json"

step "Rust: ratios (try_acquire beside governor and a Mutex-wrapped Guava, interleaved)"
if $quick; then
  export RATIO_ROUNDS="${RATIO_ROUNDS:-5}" RATIO_MILLIS="${RATIO_MILLIS:-10}"
fi
RATIO_JSON="$PWD/$results/rust-ratios.json" suite rust-ratios \
  cargo bench --locked -p ratekeeper-benches --bench ratios

# Every other bench target of the packages under benches/ (a new one is
# picked up as soon as it is declared in its Cargo.toml).
criterion_args=()
$quick && criterion_args=(--quick)
mapfile -t targets < <(cargo metadata --locked --no-deps --format-version 1 | python3 -c '
import json, sys
root = sys.argv[1]
for p in json.load(sys.stdin)["packages"]:
    if not p["manifest_path"].startswith(root + "/benches/"):
        continue
    for t in p["targets"]:
        if "bench" in t["kind"] and t["name"] != "ratios":
            print(p["name"], t["name"])
' "$PWD")
for entry in "${targets[@]}"; do
  read -r package target <<<"$entry"
  step "Rust: $target ($package)"
  CRITERION_HOME="$PWD/$results/criterion/$target" suite "rust-$target" \
    cargo bench --locked -p "$package" --bench "$target" -- "${criterion_args[@]}"
done

step "C: rk_rate_limiter_try_acquire() through the C ABI"
c_args=""
$quick && c_args="--quick"
suite c sh -c "make -s --no-print-directory -C benches/c run ARGS='$c_args' >'$results/c.json'"

step "Python: try_acquire() beside the Python rate limiters"
python_args=()
$quick && python_args=(--fast)
# shellcheck disable=SC2086 # PYTHON_BENCH_ARGS is a list of options
suite python benches/python/run "${python_args[@]}" ${PYTHON_BENCH_ARGS:-} --summary-json "$PWD/$results/python.json"

step "Node.js: tryAcquire() beside the npm rate limiters"
node_rounds=21
$quick && node_rounds=5
node_bench() {
  (cd node && npm run --silent build) >&2
  (cd benches/node && npm ci --no-audit --no-fund --loglevel=error) >&2
  (cd benches/node && node bench.mjs --json --rounds "$node_rounds") >"$results/node.json"
}
suite node node_bench

step "Java: Guava's RateLimiter.tryAcquire(), from its jar"
java_bench() {
  local classes="target/bench/java"
  mkdir -p "$classes"
  javac -cp /usr/share/java/guava.jar -d "$classes" benches/java/GuavaTryAcquire.java
  local version
  version="$(dpkg-query -W -f='${Version}' libguava-java 2>/dev/null | sed 's/-[^-]*$//' || true)"
  local args=()
  $quick && args=(--quick)
  java -Dguava.version="$version" -cp "/usr/share/java/guava.jar:$classes" GuavaTryAcquire "${args[@]}" >"$results/java.json"
}
suite java java_bench

if [ -x benches/redis/run ]; then
  step "Redis: benches/redis/run"
  redis_args=(--json "$PWD/$results/redis.json")
  $quick && redis_args+=(--quick)
  suite redis benches/redis/run "${redis_args[@]}"
else
  step "Redis: no benches/redis/run in this tree; skipped (the report says so)"
fi

step "HTTP: the middleware under wrk and autocannon, beside the peers"
http_tower() {
  local args=(--json "$PWD/$results/http-tower.json")
  $quick && args+=(--rounds 1 --duration 2)
  benches/http/tower/run "${args[@]}"
}
suite http-tower http_tower
http_python() {
  local args=(--json "$PWD/$results/http-python.json")
  $quick && args+=(--seconds 2)
  benches/http/python/run "${args[@]}"
  # The middleware's own time, without a server: steadier than the loads.
  args=(--in-process --json "$PWD/$results/http-python-in-process.json")
  $quick && args+=(--seconds 1)
  benches/http/python/run "${args[@]}"
}
suite http-python http_python
http_node() {
  # The package was built for the Node.js suite above.
  (cd benches/http/node && npm ci --no-audit --no-fund --loglevel=error) >&2
  local args=(--json "$PWD/$results/http-node.json" --rounds 5)
  $quick && args=(--json "$PWD/$results/http-node.json" --rounds 1 --seconds 2)
  (cd benches/http/node && node bench.mjs "${args[@]}")
  # The middleware's own time, without HTTP: steadier than the loads.
  local direct=(--json "$PWD/$results/http-node-direct.json")
  $quick && direct+=(--rounds 3 --ms 200)
  (cd benches/http/node && node direct.mjs "${direct[@]}")
}
suite http-node http_node

step "Install: the artifacts' sizes, and cold import times beside limits and rate-limiter-flexible"
install_bench() {
  scripts/dist.sh python node c
  local args=(--json "$PWD/$results/install.json")
  $quick && args+=(--rounds 5)
  benches/install/run "${args[@]}"
}
suite install install_bench

step "report"
if $quick; then
  report="target/bench/BENCHMARKS-quick.md"
else
  report="BENCHMARKS.md"
fi
python3 benches/report.py write "$results" "$report"
echo "wrote $report in $((SECONDS - started)) s"
if [ -s "$results/failed.txt" ]; then
  cat "$results/failed.txt" >&2
  exit 1
fi
