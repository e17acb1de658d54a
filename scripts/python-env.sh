# The project's Python environment, for scripts to source (not to run):
#
#   source scripts/python-env.sh
#   rk_python_venv              # .venv exists (with pip); prints nothing
#   rk_python_dev_tools         # + python/requirements-dev.txt (pytest, mypy, ruff)
#   rk_python_requirements FILE # + a pinned requirements file
#   rk_python_package           # + ratekeeper's release wheel, built from this tree into
#                               #   dist/ by scripts/dist/python.sh, installed
#   "$RK_VENV/bin/python" ...
#
# Every function is idempotent and quiet when there is nothing to do. The
# package is rebuilt only when a source it is built from is newer than the
# last install (or the install is missing or broken), so a stale build is
# never tested. PYTHON picks the interpreter the venv is made from
# (default python3, which must be CPython >= 3.9); RK_VENV moves the venv.
# Logs go to stderr.

RK_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RK_VENV="${RK_VENV:-$RK_ROOT/.venv}"

rk_python_log() { echo "python-env: $*" >&2; }

rk_python_venv() {
  if [ -x "$RK_VENV/bin/python" ] && "$RK_VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    return 0
  fi
  local python="${PYTHON:-python3}"
  command -v "$python" >/dev/null 2>&1 || { rk_python_log "$python not found: install CPython >= 3.9"; return 1; }
  if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 9))'; then
    rk_python_log "$python is $("$python" --version 2>&1); ratekeeper needs CPython >= 3.9"
    return 1
  fi
  rk_python_log "creating $RK_VENV from $("$python" --version 2>&1)"
  rm -rf "$RK_VENV"
  if ! "$python" -m venv "$RK_VENV" >/dev/null 2>&1; then
    # Debian's own python3 ships venv's ensurepip separately.
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
      rk_python_log "python3 -m venv failed: apt-get install python3-venv"
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv >/dev/null \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv >/dev/null; }
      rm -rf "$RK_VENV"
    fi
    "$python" -m venv "$RK_VENV" >&2
  fi
}

rk_python_requirements() {
  rk_python_venv
  local req="$1"
  local stamp="$RK_VENV/.installed-$(echo "$req" | tr '/' '_')"
  if [ -f "$stamp" ] && [ ! "$req" -nt "$stamp" ]; then
    return 0
  fi
  rk_python_log "pip install -r ${req#"$RK_ROOT"/}"
  "$RK_VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" >&2
  touch "$stamp"
}

rk_python_dev_tools() {
  rk_python_requirements "$RK_ROOT/python/requirements-dev.txt"
}

# Whether any source the wheel is built from is newer than FILE (printing
# the first such source).
rk_python_sources_newer_than() {
  local newer
  newer="$(find "$RK_ROOT/Cargo.toml" "$RK_ROOT/Cargo.lock" "$RK_ROOT/crates" "$RK_ROOT/bindings/python" \
    "$RK_ROOT/python/pyproject.toml" "$RK_ROOT/python/requirements-dist.txt" "$RK_ROOT/python/ratekeeper" \
    "$RK_ROOT/scripts/dist/python.sh" -newer "$1" -type f ! -name '*.pyc' ! -name '*.so' -print -quit 2>/dev/null)"
  [ -n "$newer" ] && echo "$newer"
}

rk_python_package() {
  rk_python_venv
  # Each stamp holds the path of a wheel; its time is the start of that
  # wheel's build. This venv's: the wheel it has installed. The tree's
  # (under target/): the last wheel built here, whichever venv asked, so a
  # second venv (the benchmark's) installs it rather than building it again
  # with other tools on its PATH, which would rebuild every crate.
  local stamp="$RK_VENV/.ratekeeper-installed"
  local built_stamp="$RK_ROOT/target/python-wheel.built"
  local newer wheel
  if [ -f "$stamp" ] && [ -f "$(cat "$stamp")" ] \
    && "$RK_VENV/bin/python" -m pip --version >/dev/null 2>&1 \
    && "$RK_VENV/bin/python" -c 'import ratekeeper._ratekeeper' >/dev/null 2>&1; then
    newer="$(rk_python_sources_newer_than "$stamp")" || return 0
    rk_python_log "$newer changed since the last install"
  fi
  if [ -f "$built_stamp" ] && [ -f "$(cat "$built_stamp")" ] \
    && ! rk_python_sources_newer_than "$built_stamp" >/dev/null; then
    wheel="$(cat "$built_stamp")"
    rk_python_log "pip install ${wheel#"$RK_ROOT"/} (built from these sources)"
  else
    # The same wheel a release ships (maturin --zig, manylinux2014, checked
    # with auditwheel), so every stage after this one tests that artifact.
    rk_python_log "scripts/dist/python.sh (the release wheel and the sdist, into dist/), then pip install the wheel"
    # Taken before the build: a source edited during the build makes the
    # next call build again.
    local started="$RK_VENV/.ratekeeper-installing"
    touch "$started"
    local built
    built="$("$RK_ROOT/scripts/dist/python.sh")" || return 1
    wheel="$(grep '\.whl$' <<<"$built")"
    mkdir -p "${built_stamp%/*}"
    echo "$wheel" >"$built_stamp"
    touch -r "$started" "$built_stamp"
    rm -f "$started"
  fi
  "$RK_VENV/bin/python" -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel" >&2 \
    || return 1
  echo "$wheel" >"$stamp"
  touch -r "$built_stamp" "$stamp"
}
