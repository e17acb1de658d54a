#!/usr/bin/env bash
# A bounded fuzz run of every target in fuzz/ (cargo-fuzz, libFuzzer with
# AddressSanitizer), starting from the committed corpus: fails on any crash,
# panic, broken invariant, leak or timeout. scripts/test.sh runs it.
#
#   scripts/fuzz-smoke.sh [TARGET...]
#
# FUZZ_SECONDS: how long each target runs (default 8 when CI=true, else 10).
# This is a smoke run: every committed corpus input replayed, then a short
# search; for a long one, FUZZ_SECONDS=300 or cargo fuzz run (fuzz/README.md).
# At 15 s for 16 targets this was the longest stage of CI, 9 of a
# 46-minute run.
# FUZZ_SANITIZER: cargo fuzz's --sanitizer (default address; none is faster).
# FUZZ_JOBS: how many targets run at once (default: the number of cores).
#
# Works on a stable toolchain: cargo-fuzz passes unstable rustc flags
# (-Zsanitizer=address and the coverage instrumentation), which stable
# rustc accepts under RUSTC_BOOTSTRAP=1; the sanitizer runtimes ship with
# stable's rust-std. Needs cargo-fuzz (scripts/setup.sh installs it).
#
# The committed corpus (fuzz/corpus/TARGET) is only read: what a run finds
# goes to fuzz/target/fuzz-smoke/corpus/TARGET, a crash's input to
# fuzz/artifacts/TARGET (both ignored by git), and each target's log to
# fuzz/target/fuzz-smoke/TARGET.log. A crash becomes a regression test:
# fuzz/README.md says how.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../fuzz"

if [ "${CI:-}" = true ]; then default_seconds=8; else default_seconds=10; fi
seconds="${FUZZ_SECONDS:-$default_seconds}"
sanitizer="${FUZZ_SANITIZER:-address}"
export RUSTC_BOOTSTRAP=1
# The fuzz crate is a workspace of its own, built with its own flags: its
# own target directory, whatever the environment says, so that neither
# build invalidates the other's.
export CARGO_TARGET_DIR="$PWD/target"
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

if [ $# -gt 0 ]; then targets=("$@"); else mapfile -t targets < <(cargo fuzz list); fi

echo "fuzz: building ${#targets[@]} targets (sanitizer: $sanitizer)"
if [ $# -gt 0 ]; then
  for target in "${targets[@]}"; do cargo fuzz build --sanitizer "$sanitizer" "$target"; done
else
  cargo fuzz build --sanitizer "$sanitizer"
fi

out=target/fuzz-smoke
mkdir -p "$out/corpus"
rm -f "$out"/*.status

# One target's run: its log, and its exit status in $out/TARGET.status.
run_target() {
  local target="$1" status=0
  mkdir -p "corpus/$target" "$out/corpus/$target"
  # New inputs go to the first corpus folder; the committed one is read.
  cargo fuzz run --sanitizer "$sanitizer" "$target" "$out/corpus/$target" "corpus/$target" -- \
    -max_total_time="$seconds" -timeout=30 -print_final_stats=1 >"$out/$target.log" 2>&1 || status=$?
  echo "$status" >"$out/$target.status"
}

# As many targets at once as there are cores (FUZZ_JOBS): each libFuzzer
# run is one process on one core, so on CI's two cores the runs take half
# the wall time they took one after the other.
jobs="${FUZZ_JOBS:-$(nproc)}"
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_target "$target" &
done
wait

passed=0
failed=()
total=0
for target in "${targets[@]}"; do
  log="$out/$target.log"
  status="$(cat "$out/$target.status" 2>/dev/null || echo missing)"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  runs="${runs:-0}"
  if [ "$status" = 0 ]; then
    passed=$((passed + 1))
    total=$((total + runs))
    printf 'fuzz: %-24s ok   %10s executions in %s s\n' "$target" "$runs" "$seconds"
  else
    failed+=("$target")
    printf 'fuzz: %-24s FAILED (exit %s) after %s executions; the log: fuzz/%s\n' "$target" "$status" "$runs" "$log"
    # What the fuzzer found, and how to reproduce it.
    grep -E -A12 'panicked at|ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)' "$log" | head -n 40 >&2 || true
    grep -E -A3 '^Reproduce with' "$log" >&2 || true
  fi
done
echo "fuzz: $total executions in all"
echo "fuzz: ${passed} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
