#!/usr/bin/env bash
# Runs the benchmarks: `make bench` runs this. Prints the interleaved ratio
# table (the figures the README quotes), then criterion's detailed run, then
# the Python benchmark beside its peers (benches/python/run; pyperf options
# such as --fast can be passed in PYTHON_BENCH_ARGS).
# the Node.js package beside the npm rate limiters (benches/node).
# every algorithm's decision cost beside governor's in the same run.
# keyed limiters at 1k and 1M keys beside governor's keyed limiter.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo bench --locked -p ratekeeper-benches --bench ratios
cargo bench --locked -p ratekeeper-benches --bench rate_limiter
cargo bench --locked -p ratekeeper-benches --bench algorithms
cargo bench --locked -p ratekeeper-benches --bench keyed
benches/python/run ${PYTHON_BENCH_ARGS:-}
scripts/setup.sh
(cd node && npm run --silent build)
(cd benches/node && npm ci --no-audit --no-fund --loglevel=error && node bench.mjs)
