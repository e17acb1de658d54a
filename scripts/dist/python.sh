#!/usr/bin/env bash
# The Python part of `make dist`: the release wheel of python/ (one abi3
# wheel for every CPython >= 3.9) and the sdist, into dist/.
#
#   scripts/dist/python.sh [--target TRIPLE] [--wheel | --sdist] [--no-zig] [--out DIR]
#
#   --target TRIPLE  a Rust target triple (default: the host's, from rustc);
#                    its standard library must be installed (rustup target
#                    add TRIPLE). How it is linked and tagged:
#                      *-linux-gnu*   maturin --zig, against glibc 2.17's
#                                     symbols: manylinux2014 (manylinux_2_17)
#                      *-linux-musl*  maturin --zig: musllinux_1_2
#                      anything else  the platform's own linker, no tag
#                                     policy (macOS, run on macOS)
#   --wheel          only the wheel (a release's per-target jobs)
#   --sdist          only the sdist (it is the same for every target)
#   --no-zig         link with the system's linker even on Linux (inside a
#                    manylinux or musllinux container, whose own libc gives
#                    the tag); the checks below are the same
#   --out DIR        where the artifacts go (default: dist/)
#
# Prints the path of each artifact it wrote, one a line, on stdout (logs go
# to stderr), and replaces in DIR only what it replaces: a wheel of the same
# platform tag, or the sdist; the C tarball (ratekeeper-VERSION-TARGET.tar.gz)
# and other targets' wheels stay.
#
# The tools are pinned in python/requirements-dist.txt (maturin, ziglang,
# auditwheel) and installed into the project's .venv (scripts/python-env.sh).
# CARGO_TARGET_DIR is honoured. Windows wheels are built by maturin itself
# (the release workflow's maturin action), with no script of ours between.
#
# What is checked before an artifact is kept:
#   - the wheel is tagged cp39-abi3, and holds the extension, the .pyi stubs
#     and py.typed;
#   - on Linux, `auditwheel show` names a platform tag no newer than
#     manylinux_2_17 (glibc) or musllinux_1_2 (musl): the extension needs no
#     newer libc symbol than the tag promises, and no library outside it;
#   - the sdist holds what `pip install` needs to build it: pyproject.toml,
#     the workspace's Cargo.toml and Cargo.lock, the extension's crate, the
#     stubs and py.typed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

usage() {
  echo "usage: scripts/dist/python.sh [--target TRIPLE] [--wheel | --sdist] [--no-zig] [--out DIR]" >&2
  exit 2
}
log() { echo "dist/python: $*" >&2; }
fail() {
  echo "dist/python: $*" >&2
  exit 1
}

target=""
out="dist"
want_wheel=true
want_sdist=true
zig=true
while [ $# -gt 0 ]; do
  case "$1" in
    --target) [ $# -ge 2 ] || usage; target="$2"; shift 2 ;;
    --target=*) target="${1#--target=}"; shift ;;
    --out) [ $# -ge 2 ] || usage; out="$2"; shift 2 ;;
    --out=*) out="${1#--out=}"; shift ;;
    --wheel) want_sdist=false; shift ;;
    --sdist) want_wheel=false; shift ;;
    --no-zig) zig=false; shift ;;
    -h | --help) sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scripts/dist/python.sh: unknown argument $1" >&2; usage ;;
  esac
done
$want_wheel || $want_sdist || fail "--wheel and --sdist together: name neither to build both"

export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
# shellcheck source=../python-env.sh
source "$root/scripts/python-env.sh"
rk_python_requirements "$root/python/requirements-dist.txt"
# maturin, and cargo-zigbuild inside it, find zig as `python3 -m ziglang`:
# the venv's python3, which has it.
export PATH="$RK_VENV/bin:$PATH"
python="$RK_VENV/bin/python"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT

# Lists a zip or tar archive's members, one a line.
members() {
  "$python" - "$1" <<'EOF'
import sys, tarfile, zipfile

path = sys.argv[1]
if path.endswith(".whl"):
    names = zipfile.ZipFile(path).namelist()
else:
    with tarfile.open(path) as archive:
        names = archive.getnames()
print("\n".join(names))
EOF
}

# Fails unless the archive $1 has a member ending in each of the names that
# follow (a member's path is compared from a slash, so `ratekeeper/py.typed`
# matches `ratekeeper-0.1.0/python/ratekeeper/py.typed`).
require_members() {
  local archive="$1" listing name
  shift
  listing="$(members "$archive")"
  for name in "$@"; do
    grep -Eq "(^|/)${name//./\\.}\$" <<<"$listing" \
      || fail "${archive##*/} lacks $name; it holds:"$'\n'"$listing"
  done
}

if $want_wheel; then
  [ -n "$target" ] || target="$(rustc -vV | sed -n 's/^host: //p')"
  args=(build --release --locked --target "$target" --out "$staging")
  case "$target" in
    *-linux-gnu*) policy=manylinux2014 ;;
    *-linux-musl*) policy=musllinux_1_2 ;;
    *) policy="" zig=false ;;
  esac
  [ -n "$policy" ] && args+=(--compatibility "$policy")
  $zig && args+=(--zig)
  log "maturin ${args[*]}"
  (cd python && maturin "${args[@]}" >&2)
  wheels=("$staging"/*.whl)
  if [ ${#wheels[@]} -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
    fail "maturin left ${#wheels[@]} wheels: ${wheels[*]}"
  fi
  wheel="${wheels[0]}"
  name="${wheel##*/}"
  # name-version-pythontag-abitag-platformtag.whl
  IFS=- read -r _ version python_tag abi_tag platform_tag <<<"${name%.whl}"
  [ "$python_tag-$abi_tag" = "cp39-abi3" ] || fail "$name is not one abi3 wheel for CPython >= 3.9 (cp39-abi3)"
  case "$target" in
    *-windows-*) extension='ratekeeper/_ratekeeper.pyd' ;;
    *) extension='ratekeeper/_ratekeeper.abi3.so' ;;
  esac
  require_members "$wheel" ratekeeper/__init__.py "$extension" ratekeeper/_ratekeeper.pyi ratekeeper/py.typed

  if [ -n "$policy" ]; then
    shown="$(auditwheel show "$wheel")"
    echo "$shown" >&2
    # `auditwheel show` names the oldest platform tag the wheel satisfies:
    # the one whose libc it needs no newer symbol from.
    tag="$(grep -Eo '"(many|musl)linux_[0-9]+_[0-9]+_[a-z0-9_]+"' <<<"$shown" | head -n 1 | tr -d '"')"
    [ -n "$tag" ] || fail "auditwheel show names no manylinux or musllinux tag for $name"
    IFS=_ read -r family major minor _ <<<"$tag"
    case "$policy" in
      manylinux2014) [ "$family" = manylinux ] && { [ "$major" -lt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -le 17 ]; }; } ;;
      musllinux_1_2) [ "$family" = musllinux ] && { [ "$major" -lt 1 ] || { [ "$major" -eq 1 ] && [ "$minor" -le 2 ]; }; } ;;
    esac || fail "$name needs $tag, newer than $policy allows"
    log "auditwheel: $name satisfies $tag"
  fi
  # Replace this platform's wheel, whatever its version; keep the others'.
  rm -f "$out"/ratekeeper-*-cp39-abi3-"$platform_tag"
  mv "$wheel" "$out/"
  log "wheel ($(du -k "$out/$name" | cut -f1) KiB, version $version)"
  echo "$out/$name"
fi

if $want_sdist; then
  log "maturin sdist"
  (cd python && maturin sdist --out "$staging" >&2)
  sdists=("$staging"/*.tar.gz)
  if [ ${#sdists[@]} -ne 1 ] || [ ! -f "${sdists[0]}" ]; then
    fail "maturin left ${#sdists[@]} sdists: ${sdists[*]}"
  fi
  sdist="${sdists[0]}"
  require_members "$sdist" pyproject.toml Cargo.toml Cargo.lock bindings/python/Cargo.toml bindings/python/src/lib.rs \
    ratekeeper/__init__.py ratekeeper/_ratekeeper.pyi ratekeeper/py.typed
  if members "$sdist" | grep -Eq '\.(so|pyd|whl)$'; then
    fail "${sdist##*/} holds a built file: $(members "$sdist" | grep -E '\.(so|pyd|whl)$' | head -n 3)"
  fi
  # The sdist is ratekeeper-VERSION.tar.gz; the C part's tarballs,
  # ratekeeper-VERSION-TARGET.tar.gz, have a dash after the version.
  for old in "$out"/ratekeeper-*.tar.gz; do
    [ -f "$old" ] || continue
    rest="${old##*/ratekeeper-}"
    case "${rest%.tar.gz}" in *-*) ;; *) rm -f "$old" ;; esac
  done
  mv "$sdist" "$out/"
  log "sdist ($(du -k "$out/${sdist##*/}" | cut -f1) KiB)"
  echo "$out/${sdist##*/}"
fi
