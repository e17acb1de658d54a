#!/usr/bin/env bash
# Runs the benchmarks: `make bench` runs this. Prints the interleaved ratio
# table (the figures the README quotes), then criterion's detailed run, then
# every algorithm's decision cost beside governor's in the same run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo bench --locked -p ratekeeper-benches --bench ratios
cargo bench --locked -p ratekeeper-benches --bench rate_limiter
cargo bench --locked -p ratekeeper-benches --bench algorithms
