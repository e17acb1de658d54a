#!/usr/bin/env bash
# Runs the project's tests, stage by stage. `make test` (and CI's .ci/run)
# run every stage; a contributor runs the part they touched:
#
#   scripts/test.sh                  every stage, in order (what CI runs)
#   scripts/test.sh NAME...          only the stages of these groups (or these
#                                    stages), in the same order
#   scripts/test.sh --list           the groups, and every stage with its groups
#
# Groups: rust c python node redis conformance diff fuzz docs lint cli demo
# bench (`--list` says what each holds; a stage may be in several). Setup
# (scripts/setup.sh: idempotent installs, a few seconds when nothing is
# missing) runs first whatever is named; a stage that needs a build has it
# in its group (`scripts/test.sh docs` builds the Python and Node.js
# packages it runs the blocks of). An unknown name is an error that lists
# the names. At the end — also when a stage fails — a table gives each
# stage's wall time.
#
# What the stages check, in order: formatting, clippy with warnings as
# errors, the no_std check, the C header's drift check, that every
# markdown code block is of a kind some stage checks (scripts/doc_snippets.py
# check, which parses the shell and JSON blocks), unit/doc/property tests
# (with the std layer's stress and abuse tests), the Redis Cluster's
# resharding and failover under load (three masters with a replica each,
# tests/redis/with-redis --cluster-replicas), the loom models of the std
# layer's concurrent paths (scripts/loom.sh), the C tests (valgrind, ASan;
# the Redis ones against a private Redis and a Redis Cluster; the
# markdown's C blocks too), the examples, the conformance vectors through
# every language's runner, an install of the C library used from outside
# the repository, the Python package (its release wheel, built once by
# scripts/dist/python.sh and installed into .venv; ruff, strict mypy,
# stubtest, pytest, its Redis tests under tests/redis/with-redis; the
# markdown's Python blocks run among them; then the wheel installed into a
# fresh venv with no Rust toolchain, and the sdist built by pip), the
# Node.js package (declarations up to date, its tests, its Redis tests
# against a private Redis and a Redis Cluster, the markdown's JavaScript
# blocks run and type-checked among them, installed from dist/'s tarballs —
# the package and its platform package — into a new project with no Rust
# toolchain), one Redis limiter from three languages, a `ratekeeper
# simulate` plotted as SVG and PNG, the markdown's Rust blocks (rustdoc
# --test) and its shell blocks marked `run`, the demo without its real
# waits (scripts/demo.sh --quick), the differential test against the real
# Guava jar (GUAVA_DIFF_SCENARIOS, default 2000, with a fresh seed each
# run; GUAVA_DIFF_SEED pins one), and the token bucket's against Go's
# golang.org/x/time/rate (XTIME_DIFF_SCENARIOS, XTIME_DIFF_SEED, likewise),
# and a bounded fuzz run of every target in fuzz/ on its committed corpus
# (scripts/fuzz-smoke.sh: FUZZ_SECONDS per target, 8 under CI).
#
# The markdown's C, Python and JavaScript blocks run inside the C tests,
# pytest and `npm test`; the docs group's stages for them run them alone,
# and do nothing when the stage that runs them is part of the same run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The groups, in the order --list shows them, and what each is for.
GROUP_NAMES=(rust c python node redis conformance diff fuzz docs lint cli demo bench)
declare -A GROUP_HELP=(
  [rust]="the Rust workspace: fmt, clippy, no_std, cargo test, loom, the example, the Rust runner"
  [c]="the C library: header, tests under valgrind and ASan, example, install, the C runner"
  [python]="the Python package: release wheel, ruff, mypy, stubtest, pytest, its Redis tests, its runner, the wheel installed"
  [node]="the Node.js package: declarations, build, tests, its Redis tests, its runner, npm pack"
  [redis]="every stage that needs a Redis server: each language's Redis tests, cross-language"
  [conformance]="the vectors through every language's runner, and the differential tests"
  [diff]="the differential tests against Guava's jar and Go's x/time/rate"
  [fuzz]="the fuzz crate's fmt and clippy, and every target briefly on its corpus"
  [docs]="every code block of the markdown: its kind, then each language's blocks run"
  [lint]="formatters and linters, no package built: fmt, clippy, ruff, header and declarations drift"
  [cli]="ratekeeper simulate: plots, and the markdown's shell blocks marked run"
  [demo]="the demo without its real waits (builds everything)"
  [bench]="the benchmark harnesses: the report writer, the Python benchmark's checks"
)

# The stages, in the order they run: `stage ID "GROUPS" "TITLE"`, then its
# commands, the function stage_ID. The group "*" is in every selection.
STAGES=()
declare -A STAGE_GROUPS=() STAGE_TITLE=()
stage() { STAGES+=("$1"); STAGE_GROUPS[$1]="$2"; STAGE_TITLE[$1]="$3"; }

# Make's own output of the C builds: quiet, without directory lines.
make_c() { make -s --no-print-directory "$@"; }

stage setup "*" "setup (scripts/setup.sh: installs what is missing)"
stage_setup() {
  scripts/setup.sh
}

stage fmt "rust lint" "cargo fmt --check"
stage_fmt() {
  cargo fmt --all --check
}

stage clippy "rust lint" "cargo clippy (warnings are errors)"
stage_clippy() {
  cargo clippy --workspace --all-targets --locked -- -D warnings
}

stage nostd "rust" "no_std: ratekeeper-core builds beside a #[panic_handler] of its own"
stage_nostd() {
  cargo build --locked -p ratekeeper-nostd-check
}

stage header "c lint" "C header: include/ratekeeper.h is what cbindgen generates"
stage_header() {
  cbindgen --config bindings/c/cbindgen.toml --crate ratekeeper-c --output include/ratekeeper.h bindings/c
  git diff --exit-code -- include/ratekeeper.h
}

stage versions "lint" "one version: scripts/version.py check (every package, the header, CHANGELOG), and its tests"
stage_versions() {
  local files=(scripts/version.py scripts/test_version.py)
  "$RK_VENV"/bin/ruff format --config python/pyproject.toml --check "${files[@]}"
  "$RK_VENV"/bin/ruff check --config python/pyproject.toml "${files[@]}"
  # tomllib: Python 3.11 (python/pyproject.toml's mypy checks against 3.10).
  "$RK_VENV"/bin/mypy --strict --python-version 3.11 --no-incremental "${files[@]}"
  "$RK_VENV"/bin/pytest -q -p no:cacheprovider scripts/test_version.py
  python3 scripts/version.py check
}

stage docs-check "docs lint" "docs: every code block of the markdown is of a kind a stage checks (scripts/doc_snippets.py)"
stage_docs-check() {
  python3 scripts/doc_snippets.py check
}

stage release-lint "lint" "release workflow: actionlint, with shellcheck on its scripts (tests/release/lint.sh)"
stage_release-lint() {
  tests/release/lint.sh
}

stage cargo-test "rust" "cargo test, then the Sentinel failover test (with-redis --sentinel)"
stage_cargo-test() {
  cargo test --workspace --locked
  # Sentinel: the master killed under load (needs the servers with-redis starts).
  # --workspace, not -p ratekeeper-redis (the only package with this test):
  # the features of the build above, so no dependency is compiled again.
  tests/redis/with-redis --sentinel cargo test --locked --workspace --test sentinel
}

stage cluster-failover "rust redis" "Rust: a slot moved and a master killed under load, on three masters with a replica each (with-redis --cluster-replicas)"
stage_cluster-failover() {
  # Skipped by the cargo-test stage (no such cluster there): they run here.
  tests/redis/with-redis --cluster-replicas \
    cargo test --workspace --locked --test cluster_reshard --test cluster_failover
}

stage cargo-test-tls "rust redis" "cargo test: the Redis store over TLS (rediss://, mutual TLS, refused certificates, ACL) against with-redis --tls"
stage_cargo-test-tls() {
  tests/redis/with-redis --tls cargo test --locked -q --workspace --test tls
}

stage tower-redis "rust redis" "Rust: the tower layer's limit held across two axum servers sharing a Redis (with-redis)"
stage_tower-redis() {
  # The whole workspace's feature set, as the cargo-test stage builds it,
  # plus ratekeeper-tower's `redis` feature: only that crate is rebuilt.
  tests/redis/with-redis cargo test --workspace --locked -q --features ratekeeper-tower/redis --test redis
}

stage loom "rust" "loom: the std layer's concurrent paths under every interleaving (scripts/loom.sh)"
stage_loom() {
  scripts/loom.sh
}

stage examples "rust" "examples"
stage_examples() {
  cargo run --locked -q -p ratekeeper-examples --bin guava-demo
}

stage crates-dist "rust" "crates: cargo doc (warnings are errors), cargo publish --dry-run, the .crate files in dist/crates (scripts/dist/crates.sh)"
stage_crates-dist() {
  scripts/dist.sh crates
}

stage c-tests "c" "C tests: linked shared (under valgrind) and static; under ASan+UBSan; the markdown's C blocks"
stage_c-tests() {
  make_c -C tests/c check
}

stage c-redis "c redis" "C: the Redis limiters against a private Redis (and one killed, frozen, restarted), a three-master cluster, TLS servers (and ACL users), a Sentinel-monitored master"
stage_c-redis() {
  tests/redis/with-redis make -s --no-print-directory -C tests/c redis-check
  tests/redis/with-redis --cluster make -s --no-print-directory -C tests/c redis-cluster-check
  tests/redis/with-redis --sentinel make -s --no-print-directory -C tests/c redis-sentinel-check
  tests/redis/with-redis --tls make -s --no-print-directory -C tests/c redis-tls-check
}

stage c-example "c" "C example"
stage_c-example() {
  make_c -C examples/c run
}

stage conformance-rust "conformance rust" "conformance: rust"
stage_conformance-rust() {
  tests/conformance/run rust
}

stage conformance-c "conformance c" "conformance: c"
stage_conformance-c() {
  tests/conformance/run c
}

stage conformance-c-valgrind "conformance c" "conformance: c, under valgrind, and the runner's self-test"
stage_conformance-c-valgrind() {
  make_c -C tests/conformance/c valgrind
}

stage c-install "c" "C library: the release tarball (scripts/dist/c.sh), unpacked to a new prefix; programs outside the repository via pkg-config, no Rust toolchain"
stage_c-install() {
  scripts/dist/c.sh
  tests/installed/c.sh
}

stage python-build "python docs redis conformance bench" "python: the release wheel (maturin --zig, manylinux2014, abi3; auditwheel) and the sdist into dist/, the wheel into .venv"
stage_python-build() {
  rk_python_package
}

stage ruff "python lint" "python: ruff"
stage_ruff() {
  local paths=(. ../tests/conformance/python ../benches/python ../benches/redis/python ../benches/http/python ../benches/report.py
    ../benches/test_report.py ../benches/install ../benches/install/run ../examples/python ../scripts/doc_snippets.py)
  (cd python && "$RK_VENV"/bin/ruff format --config pyproject.toml --check "${paths[@]}")
  (cd python && "$RK_VENV"/bin/ruff check --config pyproject.toml "${paths[@]}")
}

stage mypy "python" "python: mypy --strict, and stubtest (the stubs against the installed module)"
stage_mypy() {
  (cd python && "$RK_VENV"/bin/mypy)
  "$RK_VENV"/bin/python -m mypy.stubtest ratekeeper
}

stage pytest "python" "python: pytest (the markdown's Python blocks among its tests)"
stage_pytest() {
  # pytest exits 5 when it collected no test: that is a failure here too.
  local status=0
  (cd python && "$RK_VENV"/bin/pytest) || status=$?
  if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests" >&2
    return 1
  fi
  return "$status"
}

stage python-ctrl-c "python" "python: Ctrl-C in a blocking wait, with SIGINT ignored as \`make test &\` leaves it"
stage_python-ctrl-c() {
  # A process started in the background by a shell without job control
  # (`make test &`, `nohup make test &`) inherits SIGINT ignored. The Ctrl-C
  # tests install the handler they rely on; this proves it on every run (the
  # pytest stage ran them as `make test` itself was started).
  (
    cd python
    trap '' INT
    "$RK_VENV"/bin/python -c 'import signal, sys; sys.exit(signal.getsignal(signal.SIGINT) is not signal.SIG_IGN)' \
      || { echo "SIGINT is not ignored in this stage: it would prove nothing" >&2; exit 1; }
    exec "$RK_VENV"/bin/pytest -q -p no:cacheprovider -k ctrl_c tests/test_threads.py
  )
}

stage python-redis "python redis" "python: the limiters shared through Redis, against a private Redis, a three-master cluster, a Sentinel-monitored master, TLS servers (and ACL users)"
stage_python-redis() {
  # Each under its own server (tests/redis/with-redis); pytest's exit status
  # 5, no test collected, fails the stage too.
  tests/redis/with-redis bash -c 'cd python && exec "$1"/bin/pytest tests/with_redis' _ "$RK_VENV"
  tests/redis/with-redis --cluster bash -c 'cd python && exec "$1"/bin/pytest tests/with_redis_cluster' _ "$RK_VENV"
  tests/redis/with-redis --sentinel bash -c 'cd python && exec "$1"/bin/pytest tests/with_redis_sentinel' _ "$RK_VENV"
  # TLS (a CA, mutual TLS, refused certificates) and ACL users.
  tests/redis/with-redis --tls bash -c 'cd python && exec "$1"/bin/pytest tests/with_redis_tls' _ "$RK_VENV"
}

stage bench-report "bench python" "benchmark report writer (benches/report.py) on made-up results, and what the HTTP harness writes for it"
stage_bench-report() {
  "$RK_VENV"/bin/pytest -q -p no:cacheprovider benches/test_report.py benches/http/python/test_bench_http.py
}

stage install-bench "bench python" "install benchmark (benches/install/run: sizes, import times) on made-up artifacts"
stage_install-bench() {
  "$RK_VENV"/bin/pytest -q -p no:cacheprovider benches/install/test_run.py
}

stage conformance-python "conformance python" "conformance: python"
stage_conformance-python() {
  tests/conformance/run python
}

stage python-bench "bench python" "python: the benchmark runs (one value per contender; every contender's answers checked)"
stage_python-bench() {
  benches/python/run --debug-single-value --quiet
}

stage python-installed "python" "python: the wheel installed into a fresh venv with no Rust toolchain, its conformance run and tests; the sdist built by pip"
stage_python-installed() {
  tests/installed/python.sh
}

stage node-declarations "node lint" "node: the committed TypeScript declarations are what the sources generate"
stage_node-declarations() {
  # npm run check:declarations, its napi build the release one's (zig,
  # target/node-zig): node-build and the demo then compile only the binding.
  scripts/dist/node.sh --check-declarations
}

stage node-build "node docs redis conformance" "node: build the release module once (napi build --platform --release; linux-gnu: linked with zig against glibc 2.17, checked), npm pack the package and its platform package into dist/ (scripts/dist/node.sh)"
stage_node-build() {
  scripts/dist/node.sh
}

stage node-test "node" "node: tests (node --test; tsc on TypeScript users of the declarations; the markdown's JavaScript blocks)"
stage_node-test() {
  (cd node && npm test --silent)
}

stage node-redis "node redis" "node: Redis tests (a private Redis, a three-master Redis Cluster, a Sentinel-monitored master, TLS servers and ACL users)"
stage_node-redis() {
  tests/redis/with-redis bash -c 'cd node && npm run --silent test:redis'
  tests/redis/with-redis --cluster bash -c 'cd node && npm run --silent test:redis-cluster'
  tests/redis/with-redis --sentinel bash -c 'cd node && npm run --silent test:redis-sentinel'
  # TLS (the pipe's socket too) and ACL users.
  tests/redis/with-redis --tls bash -c 'cd node && npm run --silent test:redis-tls'
}

stage conformance-node "conformance node" "conformance: node"
stage_conformance-node() {
  tests/conformance/run node
}

stage node-installed "node" "node: dist/'s two tarballs into a new project, no registry, no Rust or cc: conformance, CJS, ESM, tsc; and the folder (tests/installed/node.sh)"
stage_node-installed() {
  tests/installed/node.sh
}

stage cross-language "redis" "Redis: one distributed limiter from C, Python and Node.js (tests/redis/cross-language.sh)"
stage_cross-language() {
  # Each package brings its own admit program; until all three are in the
  # tree, say which is missing rather than run a part of the test.
  local missing=() program
  for program in python/tests/redis_admit.py node/test/redis-admit.mjs; do
    [ -f "$program" ] || missing+=("$program")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    tests/redis/cross-language.sh
  else
    echo "NOT RUN: the cross-language test waits for ${missing[*]}" >&2
  fi
}

stage simulate "cli" "ratekeeper simulate: a generated pattern through several algorithms, plotted as SVG and PNG"
stage_simulate() {
  rm -f target/smoke/poisson.svg target/smoke/poisson.png
  mkdir -p target/smoke
  local plot
  for plot in target/smoke/poisson.svg target/smoke/poisson.png; do
    cargo run --locked -q -p ratekeeper-cli -- simulate --pattern poisson:rate=200,duration=10s,seed=1 \
      --limiter fixed_window:limit=100,window=1s --limiter sliding_log:limit=100,window=1s \
      --limiter leaky_bucket_queue:capacity=50,interval=10ms --limiter guava:rate=100,warmup=2s \
      --decisions target/smoke/poisson.json --plot "$plot"
    test -s "$plot"
  done
}

# Whether a stage runs in this run (set once the names are read).
declare -A RUNS=()
# A docs stage whose blocks another stage of this run already runs says so
# and does nothing.
run_by() { # $1: the stage that runs these blocks too
  if [ -n "${RUNS[$1]:-}" ]; then
    echo "run by the stage $1 in this run"
    return 0
  fi
  return 1
}

stage docs-rust "docs" "docs: the markdown's Rust blocks, as doctests (rustdoc --test against the workspace's crates)"
stage_docs-rust() {
  python3 scripts/doc_snippets.py rust
}

stage docs-c "docs" "docs: the markdown's C blocks, compiled with -Werror and run under valgrind"
stage_docs-c() {
  run_by c-tests || make_c -C tests/c snippets
}

stage docs-python "docs" "docs: the markdown's Python blocks, run"
stage_docs-python() {
  run_by pytest || (cd python && "$RK_VENV"/bin/pytest -q -p no:cacheprovider tests/test_doc_snippets.py)
}

stage docs-javascript "docs" "docs: the markdown's JavaScript and TypeScript blocks, run and type-checked"
stage_docs-javascript() {
  run_by node-test || (cd node && node --test test/doc-snippets.test.mjs)
}

stage docs-redis "docs" "docs: the markdown's blocks that need a Redis (C, Python, JavaScript), against a private Redis"
stage_docs-redis() {
  run_by c-redis || tests/redis/with-redis make -s --no-print-directory -C tests/c redis-snippets
  run_by python-redis \
    || tests/redis/with-redis bash -c 'cd python && exec "$1"/bin/pytest -q -p no:cacheprovider tests/with_redis/test_readme_and_scripts.py' _ "$RK_VENV"
  run_by node-redis || tests/redis/with-redis bash -c 'cd node && exec node --test test/redis/doc-snippets.test.mjs'
}

stage docs-sh "docs cli" "docs: the markdown's shell blocks marked \`run\` (the simulate command of docs/simulate.md)"
stage_docs-sh() {
  python3 scripts/doc_snippets.py run-sh
}

stage demo "demo" "demo, without the real waits: Guava's scenario from Rust, Python, Node.js and C agree; the boundary attack plotted"
stage_demo() {
  scripts/demo.sh --quick
}

stage guava-diff "diff conformance" "Guava differential test"
stage_guava-diff() {
  local seed_args=()
  [ -n "${GUAVA_DIFF_SEED:-}" ] && seed_args=(--seed "$GUAVA_DIFF_SEED")
  cargo run --locked -q -p ratekeeper-guava-diff -- --scenarios "${GUAVA_DIFF_SCENARIOS:-2000}" "${seed_args[@]}"
}

stage xtime-diff "diff conformance" "x/time/rate differential test"
stage_xtime-diff() {
  local seed_args=()
  [ -n "${XTIME_DIFF_SEED:-}" ] && seed_args=(--seed "$XTIME_DIFF_SEED")
  cargo run --locked -q -p ratekeeper-xtime-diff -- --scenarios "${XTIME_DIFF_SCENARIOS:-2000}" "${seed_args[@]}"
}

stage fuzz-lint "fuzz lint" "fuzz crate: cargo fmt --check, clippy (a workspace of its own)"
stage_fuzz-lint() {
  cargo fmt --manifest-path fuzz/Cargo.toml --all --check
  CARGO_TARGET_DIR=fuzz/target cargo clippy --manifest-path fuzz/Cargo.toml --all-targets --locked -- -D warnings
}

stage fuzz-smoke "fuzz" "fuzz: every target for FUZZ_SECONDS (8 under CI) from the committed corpus"
stage_fuzz-smoke() {
  scripts/fuzz-smoke.sh
}

list() {
  echo "groups (scripts/test.sh NAME... runs the stages of these groups, in order):"
  local group id
  for group in "${GROUP_NAMES[@]}"; do
    printf '  %-12s %s\n' "$group" "${GROUP_HELP[$group]}"
  done
  echo
  echo "stages (each may be named too), in the order they run, with their groups:"
  for id in "${STAGES[@]}"; do
    printf '  %-24s %s\n' "$id" "${STAGE_GROUPS[$id]/\*/(always)}"
  done
}

usage_error() {
  echo "scripts/test.sh: $1" >&2
  echo "groups: ${GROUP_NAMES[*]}" >&2
  echo "stages: ${STAGES[*]}" >&2
  echo "(scripts/test.sh --list says what each holds; no name runs everything)" >&2
  exit 2
}

# Which stages run: all of them, or those in a group named or named alone.
names=()
for arg in "$@"; do
  case "$arg" in
    --list | -l) list; exit 0 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) usage_error "unknown option $arg" ;;
  esac
  known=false
  for group in "${GROUP_NAMES[@]}" "${STAGES[@]}"; do
    [ "$arg" = "$group" ] && known=true
  done
  $known || usage_error "unknown name $arg"
  names+=("$arg")
done
for id in "${STAGES[@]}"; do
  if [ ${#names[@]} -eq 0 ] || [ "${STAGE_GROUPS[$id]}" = "*" ]; then
    RUNS[$id]=1
    continue
  fi
  for name in "${names[@]}"; do
    if [ "$name" = "$id" ] || [[ " ${STAGE_GROUPS[$id]} " == *" $name "* ]]; then
      RUNS[$id]=1
    fi
  done
done

export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH" # where setup puts cbindgen
# shellcheck source=python-env.sh
source scripts/python-env.sh

# Wall time of each stage that ran, in milliseconds, and its outcome.
declare -A STAGE_MS=() STAGE_RESULT=()
now_ms() {
  local micros=${EPOCHREALTIME//[!0-9]/}
  if [ -n "$micros" ]; then echo $((micros / 1000)); else date +%s%3N; fi
}
current=""
started=0
run_started=$(now_ms)

seconds() { # $1: milliseconds
  printf '%d.%d s' $(($1 / 1000)) $(($1 % 1000 / 100))
}

# The table, at the end of any run: also when a stage failed (set -e ends
# the script there) or the run was interrupted.
times_table() {
  local status=$?
  trap - EXIT
  if [ -n "$current" ]; then
    STAGE_MS[$current]=$(($(now_ms) - started))
    STAGE_RESULT[$current]="FAILED (exit $status)"
  fi
  [ ${#STAGE_MS[@]} -gt 0 ] || exit "$status"
  echo
  echo "=== stage times"
  printf '%-24s %10s  %s\n' "stage" "wall time" "result"
  local id
  for id in "${STAGES[@]}"; do
    [ -n "${RUNS[$id]:-}" ] || continue
    if [ -n "${STAGE_MS[$id]:-}" ]; then
      printf '%-24s %10s  %s\n' "$id" "$(seconds "${STAGE_MS[$id]}")" "${STAGE_RESULT[$id]}"
    else
      printf '%-24s %10s  %s\n' "$id" "-" "not run"
    fi
  done
  printf '%-24s %10s  %s\n' "total" "$(seconds $(($(now_ms) - run_started)))" \
    "$([ "$status" -eq 0 ] && echo ok || echo "FAILED (exit $status)")"
  exit "$status"
}
trap times_table EXIT

for id in "${STAGES[@]}"; do
  [ -n "${RUNS[$id]:-}" ] || continue
  echo
  echo "=== ${STAGE_TITLE[$id]}"
  current=$id
  started=$(now_ms)
  "stage_$id"
  STAGE_MS[$id]=$(($(now_ms) - started))
  STAGE_RESULT[$id]=ok
  current=""
done
