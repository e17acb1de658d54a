#!/usr/bin/env bash
# Runs every test of the project: `make test` (and CI's .ci/run) run this.
#
#   scripts/test.sh
#
# Installs what it needs first (scripts/setup.sh), then: formatting, clippy
# with warnings as errors, the no_std check, the C header's drift check,
# that every markdown code block is of a kind some stage checks
# (scripts/doc_snippets.py check, which parses the shell and JSON blocks),
# unit/doc/property tests (with the std layer's stress and abuse tests; the
# doctests include the README's Rust blocks), the
# loom models of the std layer's concurrent paths (scripts/loom.sh), the C
# tests (valgrind, ASan; the Redis ones against a private Redis and a Redis
# Cluster; the markdown's C blocks too), the examples, the conformance vectors through every language's
# runner, an install of the C library used from outside the repository, the
# Node.js package (declarations up to date, its tests, its Redis tests
# against a private Redis and a Redis Cluster, the markdown's JavaScript
# blocks run and type-checked among them, installed from its tarball into a new
# project), the Python package (built by
# `pip install ./python`; ruff, strict mypy, stubtest, pytest, its Redis
# tests under tests/redis/with-redis; the markdown's Python blocks run
# among them), a
# `ratekeeper simulate` plotted as SVG and PNG and the README's (the shell
# blocks marked `run`), the demo without its real
# waits (scripts/demo.sh --quick), and the
# differential test against the real Guava jar (GUAVA_DIFF_SCENARIOS,
# default 2000, with a fresh seed each run; GUAVA_DIFF_SEED pins one), and the token bucket's
# against Go's golang.org/x/time/rate (XTIME_DIFF_SCENARIOS, XTIME_DIFF_SEED,
# likewise), and a bounded fuzz run of every target in fuzz/ on its committed
# corpus (scripts/fuzz-smoke.sh: FUZZ_SECONDS per target, 30 under CI).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

stage() { echo; echo "=== $*"; }

stage "setup"
scripts/setup.sh
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH" # where setup put cbindgen
# Make's own output of the C builds below: quiet, without directory lines.
make_c() { make -s --no-print-directory "$@"; }

stage "cargo fmt --check"
cargo fmt --all --check

stage "cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

stage "no_std: ratekeeper-core builds beside a #[panic_handler] of its own"
cargo build --locked -p ratekeeper-nostd-check

stage "C header: include/ratekeeper.h is what cbindgen generates"
cbindgen --config bindings/c/cbindgen.toml --crate ratekeeper-c --output include/ratekeeper.h bindings/c
git diff --exit-code -- include/ratekeeper.h

stage "docs: every code block of the markdown is of a kind a stage checks (scripts/doc_snippets.py)"
python3 scripts/doc_snippets.py check

stage "cargo test (the doctests include the README's Rust blocks)"
cargo test --workspace --locked

stage "loom: the std layer's concurrent paths under every interleaving (scripts/loom.sh)"
scripts/loom.sh

stage "examples"
cargo run --locked -q -p ratekeeper-examples --bin guava-demo

stage "C tests: linked shared and static, under valgrind; under ASan+UBSan; the markdown's C blocks"
make_c -C tests/c check

stage "C: the Redis limiters against a private Redis (and one killed, frozen, restarted), then a three-master cluster"
tests/redis/with-redis make -s --no-print-directory -C tests/c redis-check
tests/redis/with-redis --cluster make -s --no-print-directory -C tests/c redis-cluster-check

stage "C example"
make_c -C examples/c run

stage "conformance: rust"
tests/conformance/run rust

stage "conformance: c"
tests/conformance/run c

stage "conformance: c, under valgrind, and the runner's self-test"
make_c -C tests/conformance/c valgrind

stage "C library: make install, then a program outside the repository via pkg-config"
tests/c/install-check.sh

# shellcheck source=python-env.sh
source scripts/python-env.sh

stage "python: pip install ./python (maturin builds bindings/python)"
rk_python_package

stage "python: ruff"
(cd python && "$RK_VENV"/bin/ruff format --config pyproject.toml --check . ../tests/conformance/python ../benches/python ../benches/redis/python ../benches/report.py ../benches/test_report.py ../examples/python ../scripts/doc_snippets.py)
(cd python && "$RK_VENV"/bin/ruff check --config pyproject.toml . ../tests/conformance/python ../benches/python ../benches/redis/python ../benches/report.py ../benches/test_report.py ../examples/python ../scripts/doc_snippets.py)

stage "python: mypy --strict, and stubtest (the stubs against the installed module)"
(cd python && "$RK_VENV"/bin/mypy)
"$RK_VENV"/bin/python -m mypy.stubtest ratekeeper

stage "python: pytest"
# pytest exits 5 when it collected no test: that is a failure here too.
pytest_status=0
(cd python && "$RK_VENV"/bin/pytest) || pytest_status=$?
if [ "$pytest_status" -eq 5 ]; then
  echo "pytest collected no tests" >&2
  exit 1
elif [ "$pytest_status" -ne 0 ]; then
  exit "$pytest_status"
fi

stage "python: Ctrl-C in a blocking wait, with SIGINT ignored as \`make test &\` leaves it"
# A process started in the background by a shell without job control
# (`make test &`, `nohup make test &`) inherits SIGINT ignored. The Ctrl-C
# tests install the handler they rely on; this proves it on every run (the
# stage above ran them as `make test` itself was started).
(
  cd python
  trap '' INT
  "$RK_VENV"/bin/python -c 'import signal, sys; sys.exit(signal.getsignal(signal.SIGINT) is not signal.SIG_IGN)' \
    || { echo "SIGINT is not ignored in this stage: it would prove nothing" >&2; exit 1; }
  exec "$RK_VENV"/bin/pytest -q -p no:cacheprovider -k ctrl_c tests/test_threads.py
)

stage "python: the limiters shared through Redis, against a private Redis, then a three-master cluster"
# Each under its own server (tests/redis/with-redis); pytest's exit status
# 5, no test collected, fails the stage too.
tests/redis/with-redis bash -c 'cd python && exec "$1"/bin/pytest tests/with_redis' _ "$RK_VENV"
tests/redis/with-redis --cluster bash -c 'cd python && exec "$1"/bin/pytest tests/with_redis_cluster' _ "$RK_VENV"

stage "benchmark report writer (benches/report.py) on made-up results"
"$RK_VENV"/bin/pytest -q -p no:cacheprovider benches/test_report.py

stage "conformance: python"
tests/conformance/run python

stage "python: the benchmark runs (one value per contender; every contender's answers checked)"
benches/python/run --debug-single-value --quiet

stage "node: the committed TypeScript declarations are what the sources generate"
(cd node && npm run --silent check:declarations)

stage "node: build the package (napi build --release)"
(cd node && npm run --silent build)

stage "node: tests (node --test; tsc on TypeScript users of the declarations)"
(cd node && npm test --silent)

stage "node: Redis tests (a private Redis, then a three-master Redis Cluster)"
tests/redis/with-redis bash -c 'cd node && npm run --silent test:redis'
tests/redis/with-redis --cluster bash -c 'cd node && npm run --silent test:redis-cluster'

stage "conformance: node"
tests/conformance/run node

stage "node: npm pack, then install the tarball and the folder into new projects and use them"
node/scripts/check-install.sh

stage "Redis: one distributed limiter from C, Python and Node.js (tests/redis/cross-language.sh)"
# Each package brings its own admit program; until all three are in the
# tree, say which is missing rather than run a part of the test.
cross_language_missing=()
for program in python/tests/redis_admit.py node/test/redis-admit.mjs; do
  [ -f "$program" ] || cross_language_missing+=("$program")
done
if [ ${#cross_language_missing[@]} -eq 0 ]; then
  tests/redis/cross-language.sh
else
  echo "NOT RUN: the cross-language test waits for ${cross_language_missing[*]}" >&2
fi

stage "ratekeeper simulate: a generated pattern through several algorithms, plotted as SVG and PNG"
rm -f target/smoke/poisson.svg target/smoke/poisson.png
mkdir -p target/smoke
for plot in target/smoke/poisson.svg target/smoke/poisson.png; do
  cargo run --locked -q -p ratekeeper-cli -- simulate --pattern poisson:rate=200,duration=10s,seed=1 \
    --limiter fixed_window:limit=100,window=1s --limiter sliding_log:limit=100,window=1s \
    --limiter leaky_bucket_queue:capacity=50,interval=10ms --limiter guava:rate=100,warmup=2s \
    --decisions target/smoke/poisson.json --plot "$plot"
  test -s "$plot"
done

stage "docs: the markdown's shell blocks marked \`run\` (the README's simulate command)"
python3 scripts/doc_snippets.py run-sh

stage "demo, without the real waits: Guava's scenario from Rust, Python, Node.js and C agree; the boundary attack plotted"
scripts/demo.sh --quick

stage "Guava differential test"
seed_args=()
[ -n "${GUAVA_DIFF_SEED:-}" ] && seed_args=(--seed "$GUAVA_DIFF_SEED")
cargo run --locked -q -p ratekeeper-guava-diff -- --scenarios "${GUAVA_DIFF_SCENARIOS:-2000}" "${seed_args[@]}"

stage "x/time/rate differential test"
xtime_seed_args=()
[ -n "${XTIME_DIFF_SEED:-}" ] && xtime_seed_args=(--seed "$XTIME_DIFF_SEED")
cargo run --locked -q -p ratekeeper-xtime-diff -- --scenarios "${XTIME_DIFF_SCENARIOS:-2000}" "${xtime_seed_args[@]}"

stage "fuzz crate: cargo fmt --check, clippy (a workspace of its own)"
cargo fmt --manifest-path fuzz/Cargo.toml --all --check
CARGO_TARGET_DIR=fuzz/target cargo clippy --manifest-path fuzz/Cargo.toml --all-targets --locked -- -D warnings

stage "fuzz: every target for FUZZ_SECONDS (30 under CI) from the committed corpus"
scripts/fuzz-smoke.sh
