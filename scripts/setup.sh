#!/usr/bin/env bash
# Installs what the build and the tests need, idempotently: run it as often
# as you like. On a machine that already has everything it changes nothing.
#
#   scripts/setup.sh
#
# Needs: a Rust toolchain (cargo, rustfmt, clippy) on the PATH, and CPython
# >= 3.9 as python3 (or $PYTHON). Installs with apt-get (as root, or through
# sudo): a JDK and Debian's libguava-java (the oracle of the Guava
# differential test); for the C library's tests, libcjson-dev (the C
# conformance runner's JSON parser), valgrind, pkg-config and g++ (the header
# must compile as C++). With cargo: cbindgen, pinned, which generates
# include/ratekeeper.h, and cargo-fuzz, pinned, for the fuzz smoke run.
# Makes the project's Python venv, .venv, with the
# pinned tools of python/requirements-dev.txt (scripts/python-env.sh); and Node.js with npm when there is
# none, then node/'s npm packages (napi-rs's CLI, TypeScript) with `npm ci`
# from the committed package-lock.json, when it changed; Go and Debian's
# golang-golang-x-time-dev (golang.org/x/time/rate, the oracle of the
# token-bucket differential test); redis-server and redis-cli (the
# distributed limiters' tests start private servers and a three-master
# cluster on loopback ports, and stop them).
set -euo pipefail

log() { echo "setup: $*" >&2; }

apt_install() {
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
      log "need root (or sudo) to install: $*"; exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  log "apt-get install $*"
  if ! $sudo apt-get install -y --no-install-recommends "$@" >/dev/null; then
    log "apt-get update, then retry"
    $sudo apt-get update -qq
    $sudo apt-get install -y --no-install-recommends "$@" >/dev/null
  fi
}

need_pkgs=()
command -v javac >/dev/null 2>&1 || need_pkgs+=(openjdk-17-jdk-headless)
[ -f /usr/share/java/guava.jar ] || need_pkgs+=(libguava-java)
[ -f /usr/include/cjson/cJSON.h ] || need_pkgs+=(libcjson-dev)
command -v valgrind >/dev/null 2>&1 || need_pkgs+=(valgrind)
command -v pkg-config >/dev/null 2>&1 || need_pkgs+=(pkg-config)
command -v g++ >/dev/null 2>&1 || need_pkgs+=(g++)
command -v redis-server >/dev/null 2>&1 || need_pkgs+=(redis-server)
command -v redis-cli >/dev/null 2>&1 || need_pkgs+=(redis-tools)
# openssl: tests/redis/with-redis --tls makes its CAs and certificates.
command -v openssl >/dev/null 2>&1 || need_pkgs+=(openssl)
command -v go >/dev/null 2>&1 || need_pkgs+=(golang-go)
[ -f /usr/share/gocode/src/golang.org/x/time/rate/rate.go ] || need_pkgs+=(golang-golang-x-time-dev)
# wrk: the HTTP middleware benchmarks (benches/http/python/run).
command -v wrk >/dev/null 2>&1 || need_pkgs+=(wrk)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  apt_install "${need_pkgs[@]}"
fi

# Node.js (>= 18) and npm: the Node.js binding (node/).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  apt_install nodejs npm
fi
# `npm ci` empties node_modules and installs the lockfile exactly; a copy of
# the lockfile beside what it installed says whether it has to run again.
npm_ci() { # $1: a folder with package.json and package-lock.json
  local stamp="$1/node_modules/.ratekeeper-installed-lock.json"
  if [ -f "$stamp" ] && cmp -s "$1/package-lock.json" "$stamp"; then return; fi
  log "npm ci in $1"
  (cd "$1" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$1/package-lock.json" "$stamp"
}
npm_ci "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/node"

command -v cargo >/dev/null 2>&1 || { log "cargo not found: install Rust (https://rustup.rs)"; exit 1; }
for component in rustfmt clippy; do
  if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
    command -v rustup >/dev/null 2>&1 && rustup component add "$component"
  fi
done

# cbindgen, at the version the committed header was generated with (the
# header names it); CI regenerates the header and fails on any difference.
CBINDGEN_VERSION=0.29.4
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if [ "$(cbindgen --version 2>/dev/null)" != "cbindgen $CBINDGEN_VERSION" ]; then
  log "cargo install cbindgen $CBINDGEN_VERSION"
  cargo install --quiet --locked cbindgen --version "$CBINDGEN_VERSION"
fi

# cargo-fuzz, pinned: the fuzz smoke run (scripts/fuzz-smoke.sh) builds the
# targets in fuzz/ with it, on the stable toolchain.
CARGO_FUZZ_VERSION=0.13.2
if [ "$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $CARGO_FUZZ_VERSION" ]; then
  log "cargo install cargo-fuzz $CARGO_FUZZ_VERSION"
  cargo install --quiet --locked cargo-fuzz --version "$CARGO_FUZZ_VERSION"
fi

# shellcheck source=python-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/python-env.sh"
rk_python_dev_tools
# The release wheel's tools, pinned (scripts/dist/python.sh): maturin, zig
# as the ziglang package (maturin --zig links against glibc 2.17), auditwheel.
rk_python_requirements "$RK_ROOT/python/requirements-dist.txt"

# The release workflow's linter: actionlint, pinned in
# .github/requirements-lint.txt, and shellcheck, which it runs on every
# `run:` script of .github/workflows/ (the release-lint stage).
command -v shellcheck >/dev/null 2>&1 || apt_install shellcheck
rk_python_requirements "$RK_ROOT/.github/requirements-lint.txt"

# The Node.js platform package's linker, pinned in node/requirements-dist.txt:
# cargo-zigbuild and zig (the ziglang package), with which
# scripts/dist/node.sh links the linux-gnu module against glibc 2.17.
rk_python_requirements "$RK_ROOT/node/requirements-dist.txt"

log "ok"
