#!/usr/bin/env bash
# The demo: `make demo` runs this. Installs what is missing (setup.sh),
# builds everything, then:
#
#  1. Guava's documented scenario — RateLimiter.create(1.0), then acquire(1)
#     .. acquire(5), waiting for real — from Rust, Python, Node.js and C at
#     once (examples/*/guava_scenario.*), printed side by side, checking that
#     the four limiters returned the same waits to the microsecond (each
#     limiter runs on a manual clock moved in step with the real sleeps; the
#     real sleeps differ a little, and are shown too);
#  2. `ratekeeper simulate` of every algorithm on the boundary attack,
#     printing the summary and writing the plot to target/demo/boundary.svg
#     (and .png).
#
#   scripts/demo.sh            about 10 s of real waiting, plus the builds
#   scripts/demo.sh --quick    no real waits (scripts/test.sh runs this)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

quick=false
[ "${1:-}" = "--quick" ] && quick=true

step() { echo; echo "=== $*"; }

out="target/demo"
mkdir -p "$out"
log="$out/build.log"
: >"$log"
# Builds log to a file; on failure its end is shown.
quietly() {
  if ! "$@" >>"$log" 2>&1; then
    echo "failed: $*" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
}

step "setup, then build: the Rust workspace, the C library, the Python and Node.js packages (log: $log)"
scripts/setup.sh
quietly cargo build --workspace --locked
quietly make --no-print-directory -C examples/c guava-scenario
# shellcheck source=python-env.sh
source scripts/python-env.sh
quietly rk_python_package
# The module built as the release builds it (npm run build:native, linked
# with zig: scripts/dist/node.sh), which the test run's node-build stage
# just did: a build of the machine's own linker would compile every crate.
quietly scripts/dist/node.sh --no-pack
quietly sh -c 'cd node && npm run --silent build:types'
echo "built"
sleep_arg=()
$quick && sleep_arg=(--no-sleep)

step "Guava's RateLimiter.create(1.0), then acquire(1) .. acquire(5), in four languages at once"
langs=(Rust Python Node.js C)
cmds=(
  "target/debug/guava-scenario"
  "$RK_VENV/bin/python examples/python/guava_scenario.py"
  "node examples/node/guava_scenario.mjs"
  "target/c/examples/guava_scenario"
)
pids=()
for i in "${!langs[@]}"; do
  # shellcheck disable=SC2086 # the commands are word lists
  ${cmds[$i]} "${sleep_arg[@]}" >"$out/guava-$i.txt" 2>"$out/guava-$i.err" &
  pids+=($!)
done
failed=0
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "${langs[$i]} failed:" >&2
    cat "$out/guava-$i.err" >&2
    failed=1
  fi
done
[ "$failed" -eq 0 ] || exit 1

# Each line: acquire(N) waited W slept S. Side by side, then the check.
awk -v names="${langs[*]}" '
  BEGIN { n = split(names, lang, " ") }
  FNR == 1 { file++ }
  { row[FNR] = $1; waited[file, FNR] = $3; slept[file, FNR] = $5; rows = FNR }
  END {
    printf "%-12s %-41s %s\n", "", "waited, as the limiter returned (s)", "slept for real (s)"
    printf "%-12s", "request"
    for (f = 1; f <= n; f++) printf " %-9s", lang[f]
    printf "  "
    for (f = 1; f <= n; f++) printf " %-9s", lang[f]
    printf "\n"
    bad = 0
    for (r = 1; r <= rows; r++) {
      printf "%-12s", row[r]
      for (f = 1; f <= n; f++) {
        printf " %-9s", waited[f, r]
        if (waited[f, r] != waited[1, r]) bad = 1
      }
      printf "  "
      for (f = 1; f <= n; f++) printf " %-9s", slept[f, r]
      printf "\n"
      # Guava pre-consumes: request r waits for the r-1 permits before it.
      if (waited[1, r] != sprintf("%.6f", r - 1)) bad = 1
    }
    if (rows != 5) bad = 1
    if (bad) { print "MISMATCH: the limiters did not return the same waits (0, 1, 2, 3, 4 s)"; exit 1 }
    print "The four limiters returned the same waits to the microsecond: 0, 1, 2, 3 and 4 s."
    print "(Guava pre-consumes: each request is granted when the limiter is free, and the next one pays for it.)"
  }' "$out"/guava-0.txt "$out"/guava-1.txt "$out"/guava-2.txt "$out"/guava-3.txt

step "ratekeeper simulate: every algorithm on the boundary attack (100 per second, 100 requests on each side of a window edge)"
# The same quota everywhere: 100 per 1 s window, or 100 per second with
# a burst of 100.
target/debug/ratekeeper simulate \
  --pattern boundary:limit=100,window=1s \
  --limiter fixed_window:limit=100,window=1s \
  --limiter sliding_window:limit=100,window=1s,sub_windows=10 \
  --limiter sliding_window_counter:limit=100,window=1s \
  --limiter sliding_log:limit=100,window=1s \
  --limiter token_bucket:rate=100,burst=100 \
  --limiter gcra:max_burst=99,count_per_period=100,period=1s \
  --limiter leaky_bucket_meter:capacity=100,count_per_period=100,period=1s \
  --limiter leaky_bucket_queue:capacity=100,interval=10ms \
  --limiter guava:rate=100,timeout=0 \
  --limiter guava:rate=100 \
  --limiter guava:rate=100,warmup=1s \
  --decisions "$out/boundary-decisions.csv" \
  --plot "$out/boundary.svg" -q --summary "$out/boundary-summary.txt"
cat "$out/boundary-summary.txt"
target/debug/ratekeeper simulate --pattern boundary:limit=100,window=1s \
  --limiter fixed_window:limit=100,window=1s --limiter sliding_log:limit=100,window=1s \
  --limiter token_bucket:rate=100,burst=100 --limiter guava:rate=100 \
  --plot "$out/boundary.png" -q
echo
echo "The fixed window let 200 through within 20 ms — twice its limit — the sliding log 100."
echo "plot: $out/boundary.svg (every algorithm), $out/boundary.png (four of them)"
echo "every decision: $out/boundary-decisions.csv"
