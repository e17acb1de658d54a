#!/usr/bin/env bash
# Installs what the build and the tests need, idempotently: run it as often
# as you like. On a machine that already has everything it changes nothing.
#
#   scripts/setup.sh
#
# Needs: a Rust toolchain (cargo, rustfmt, clippy) on the PATH. Installs with
# apt-get (as root, or through sudo): a JDK and Debian's libguava-java (the
# oracle of the Guava differential test); Go and Debian's
# golang-golang-x-time-dev (golang.org/x/time/rate, the oracle of the
# token-bucket differential test).
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
command -v go >/dev/null 2>&1 || need_pkgs+=(golang-go)
[ -f /usr/share/gocode/src/golang.org/x/time/rate/rate.go ] || need_pkgs+=(golang-golang-x-time-dev)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  apt_install "${need_pkgs[@]}"
fi

command -v cargo >/dev/null 2>&1 || { log "cargo not found: install Rust (https://rustup.rs)"; exit 1; }
for component in rustfmt clippy; do
  if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
    command -v rustup >/dev/null 2>&1 && rustup component add "$component"
  fi
done
log "ok"
