#!/usr/bin/env bash
# Builds everything and runs the demo: `make demo` runs this.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --workspace --locked
cargo run --locked -q -p ratekeeper-examples --bin guava-demo
