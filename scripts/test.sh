#!/usr/bin/env bash
# Runs every test of the project: `make test` (and CI's .ci/run) run this.
#
#   scripts/test.sh
#
# Installs what it needs first (scripts/setup.sh), then: formatting, clippy
# with warnings as errors, the no_std check, unit/doc/property tests, the
# conformance vectors through every language's runner, and the differential
# test against the real Guava jar (GUAVA_DIFF_SCENARIOS, default 2000, with a
# fresh seed each run; GUAVA_DIFF_SEED pins one), and the token bucket's
# against Go's golang.org/x/time/rate (XTIME_DIFF_SCENARIOS, XTIME_DIFF_SEED,
# likewise).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

stage() { echo; echo "=== $*"; }

stage "setup"
scripts/setup.sh

stage "cargo fmt --check"
cargo fmt --all --check

stage "cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

stage "no_std: ratekeeper-core builds beside a #[panic_handler] of its own"
cargo build --locked -p ratekeeper-nostd-check

stage "cargo test"
cargo test --workspace --locked

stage "examples"
cargo run --locked -q -p ratekeeper-examples --bin guava-demo

stage "conformance: rust"
tests/conformance/run rust

stage "Guava differential test"
seed_args=()
[ -n "${GUAVA_DIFF_SEED:-}" ] && seed_args=(--seed "$GUAVA_DIFF_SEED")
cargo run --locked -q -p ratekeeper-guava-diff -- --scenarios "${GUAVA_DIFF_SCENARIOS:-2000}" "${seed_args[@]}"

stage "x/time/rate differential test"
xtime_seed_args=()
[ -n "${XTIME_DIFF_SEED:-}" ] && xtime_seed_args=(--seed "$XTIME_DIFF_SEED")
cargo run --locked -q -p ratekeeper-xtime-diff -- --scenarios "${XTIME_DIFF_SCENARIOS:-2000}" "${xtime_seed_args[@]}"
