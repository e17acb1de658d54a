#!/usr/bin/env bash
# The std layer's loom models (crates/ratekeeper/src/loom_models.rs and
# loom_models/): every concurrent path of crates/ratekeeper — the seqlock
# cell, the keyed limiters' shard lock, every limiter built on them, the
# mutex-guarded ones, the manual clock — run under every interleaving loom
# distinguishes. scripts/test.sh runs this.
#
#   scripts/loom.sh [TEST-NAME-FILTER...]
#
# Builds the crate with `--cfg loom` (its atomics, locks and cells then come
# from loom: src/sync.rs), optimised, in its own target directory
# (target/loom), so the workspace's own build is left alone. Prints each
# model's execution count and a total. LOOM_MAX_PREEMPTIONS bounds the
# search (default: none, exhaustive); the run takes a few seconds once
# built.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

log=target/loom/models.log
mkdir -p target/loom
status=0
RUSTFLAGS="${RUSTFLAGS:-} --cfg loom" cargo test --locked -q -p ratekeeper --lib --release --target-dir target/loom \
  -- loom_models --test-threads 1 --nocapture "$@" >"$log" 2>&1 || status=$?
grep -oE 'loom: .*' "$log" || true
if [ "$status" -ne 0 ]; then
  cat "$log" >&2
  echo "loom models failed (log: $log)" >&2
  exit "$status"
fi
# One line of figures: models run, executions explored.
grep -oE 'loom: .*: [0-9]+ executions' "$log" |
  awk -F': ' '{split($NF, n, " "); runs++; total += n[1]} END {printf "loom: %d model runs, %d executions in all\n", runs, total}'
grep -E '^test result' "$log"
