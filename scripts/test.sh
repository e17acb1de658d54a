#!/usr/bin/env bash
# Runs every test of the project: `make test` (and CI's .ci/run) run this.
#
#   scripts/test.sh
#
# Installs what it needs first (scripts/setup.sh), then: formatting, clippy
# with warnings as errors, the no_std check, unit/doc/property tests, the
# conformance vectors through every language's runner, the Node.js package
# (declarations up to date, its tests, installed from its tarball into a new
# project), and the differential test against the real Guava jar (GUAVA_DIFF_SCENARIOS, default 2000, with a
# fresh seed each run; GUAVA_DIFF_SEED pins one).
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

stage "node: the committed TypeScript declarations are what the sources generate"
(cd node && npm run --silent check:declarations)

stage "node: build the package (napi build --release)"
(cd node && npm run --silent build)

stage "node: tests (node --test; tsc on TypeScript users of the declarations)"
(cd node && npm test --silent)

stage "conformance: node"
tests/conformance/run node

stage "node: npm pack, then install the tarball and the folder into new projects and use them"
node/scripts/check-install.sh

stage "Guava differential test"
seed_args=()
[ -n "${GUAVA_DIFF_SEED:-}" ] && seed_args=(--seed "$GUAVA_DIFF_SEED")
cargo run --locked -q -p ratekeeper-guava-diff -- --scenarios "${GUAVA_DIFF_SCENARIOS:-2000}" "${seed_args[@]}"
