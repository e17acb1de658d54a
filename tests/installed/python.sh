#!/usr/bin/env bash
# The Python package as a user installs it, from dist/ (scripts/dist/python.sh;
# built first when missing or older than its sources):
#
#   tests/installed/python.sh
#
# 1. A fresh venv in a new folder outside the repository; the test tools of
#    python/requirements-dev.txt go in from PyPI.
# 2. With cargo, rustc and every C compiler out of PATH
#    (tests/installed/without-toolchain): pip picks this machine's wheel from
#    dist/ (--only-binary: it may not fall back to the sdist), and installs
#    that file. Then, still with no toolchain: ratekeeper imports from that
#    venv's site-packages, with its stubs and py.typed beside it and the
#    workspace's version; the conformance runner replays every vector through
#    it; and python/tests runs against it (its conftest stops the run if
#    ratekeeper comes from anywhere but that site-packages, or if another
#    copy, such as the source tree's python/ratekeeper, is on sys.path).
# 3. The sdist, where Rust is present: `pip install dist/ratekeeper-VERSION.tar.gz`
#    into a second fresh venv builds it (in the checkout's cargo target
#    folder, so that the registry crates `make install` compiled are not
#    compiled again; the sdist's own crates always are), and it imports.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

log() { echo "installed/python: $*" >&2; }
fail() {
  echo "installed/python: $*" >&2
  exit 1
}

# shellcheck source=../../scripts/python-env.sh
source scripts/python-env.sh
rk_python_package
version="$(awk '/^\[workspace\.package\]/ { inside = 1; next } /^\[/ { inside = 0 }
  inside && $1 == "version" { gsub(/"/, "", $3); print $3; exit }' Cargo.toml)"
[ -n "$version" ] || fail "no version in Cargo.toml's [workspace.package]"
sdist="$root/dist/ratekeeper-$version.tar.gz"
[ -f "$sdist" ] || fail "no $sdist: scripts/dist/python.sh makes it"

place="$(mktemp -d "${TMPDIR:-/tmp}/ratekeeper-installed-python.XXXXXX")"
trap 'rm -rf "$place"' EXIT
case "$place/" in "$root"/*) fail "$place is inside the repository" ;; esac
base_python="${PYTHON:-python3}"

venv="$place/venv"
log "a fresh venv: $venv"
"$base_python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r python/requirements-dev.txt

# What a user's pip picks from dist/ for this machine: only a wheel, and
# only from there.
log "pip install the wheel, with no Rust toolchain and no C compiler"
tests/installed/without-toolchain "$venv/bin/python" -m pip download --quiet --disable-pip-version-check \
  --no-index --find-links dist --only-binary :all: --no-deps --dest "$place/picked" "ratekeeper==$version"
wheels=("$place"/picked/ratekeeper-*.whl)
if [ ${#wheels[@]} -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
  fail "pip picked no wheel of $version from dist/"
fi
log "picked ${wheels[0]##*/}"
tests/installed/without-toolchain "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  --no-index --only-binary :all: "${wheels[0]}"

site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
check='
import sys
from importlib import metadata
from pathlib import Path

import ratekeeper

site, version = Path(sys.argv[1]).resolve(), sys.argv[2]
package = Path(ratekeeper.__file__).resolve().parent
assert package == site / "ratekeeper", f"ratekeeper from {package}, not {site}"
assert ratekeeper.__version__ == version, (ratekeeper.__version__, version)
assert metadata.version("ratekeeper") == version, metadata.version("ratekeeper")
for name in ("py.typed", "_ratekeeper.pyi"):
    assert (package / name).is_file(), f"no {name} in {package}"
# The example of the Guava javadoc: each acquire pays for the one before.
limiter = ratekeeper.RateLimiter.create(1.0, clock=ratekeeper.ManualClock())
assert [limiter.acquire(p) for p in range(1, 6)] == [0.0, 1.0, 2.0, 3.0, 4.0]
print(f"ratekeeper {ratekeeper.__version__} from {package}")
'
# From the folder of the fresh venv: nothing of the repository on sys.path.
(cd "$place" && "$root/tests/installed/without-toolchain" "$venv/bin/python" -c "$check" "$site" "$version")

log "the conformance vectors through the installed package"
RATEKEEPER_PYTHON="$venv/bin/python" tests/installed/without-toolchain tests/conformance/run python

log "python/tests against the installed package"
# The console script, not `python -m pytest`, which would put python/ (and
# its ratekeeper folder) first on sys.path; conftest.py checks the rest.
status=0
(cd python && RATEKEEPER_INSTALLED_IN="$site" "$root/tests/installed/without-toolchain" \
  "$venv/bin/pytest" -q -p no:cacheprovider) || status=$?
[ "$status" -ne 5 ] || fail "pytest collected no tests"
[ "$status" -eq 0 ] || exit "$status"

log "pip install the sdist, with Rust present"
sdist_venv="$place/sdist-venv"
"$base_python" -m venv "$sdist_venv"
# The checkout's cargo target folder: pip's build (release, no --target,
# the machine's linker) lands in its release/, where `make install` (the
# c-install stage) compiled most of the registry crates the extension
# uses, with the same profile, linker and features (89 of its 130 units;
# the rest hang on pyo3's syn features), so those are not compiled again.
# Not the wheel's part of the folder (x86_64-unknown-linux-gnu/release):
# the wheel links through zig, and cargo fingerprints the linker
# configuration. The sdist's own crates (the extension's path
# dependencies) must be compiled from the sdist, or a file it lacks could
# go unnoticed: cargo identifies a path crate by its path relative to the
# workspace root, the same in the sdist, and would take the checkout's
# build of it as fresh. So their release artifacts go first.
own_crates=()
while read -r crate; do own_crates+=(-p "$crate"); done < <(cargo tree --locked -p ratekeeper-python -e normal,build \
  --prefix none -f '{p}' | sed -n 's/^\([^ ]*\) v[^ ]* (\/.*/\1/p' | sort -u)
[ ${#own_crates[@]} -ge 8 ] || fail "cargo tree found only ${own_crates[*]} as the extension's path crates"
cargo clean --quiet --locked --release "${own_crates[@]}"
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" \
  "$sdist_venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-binary ratekeeper "$sdist"
sdist_site="$("$sdist_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
(cd "$place" && "$sdist_venv/bin/python" -c "$check" "$sdist_site" "$version")
