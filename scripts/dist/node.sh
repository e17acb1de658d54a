#!/usr/bin/env bash
# The Node.js part of `make dist`: napi-rs's layout, the native module built
# once.
#
#   scripts/dist/node.sh [--target TRIPLE] [--no-main] [--no-zig] [-- NAPI_BUILD_ARG...]
#   scripts/dist/node.sh --check-declarations | --no-pack [other options as above]
#
#   --target TRIPLE  a Rust target triple, one of node/package.json's
#                    napi.targets; default: this machine's
#   --no-main        write only the platform package: the main one holds no
#                    native code, so a release's matrix needs it from one job
#   --no-zig         a linux-gnu target: link with the system's linker, not
#                    zig (inside an image whose own glibc is 2.17, such as
#                    napi-rs's build image); the glibc check (below) runs
#   -- ARG...        passed on to `napi build`, e.g. --use-napi-cross or
#                    --cross-compile for another machine's target (a linux-gnu
#                    target is then built the way they say, not with zig)
#   --check-declarations
#                    no build, no tarball: node/scripts/declarations.mjs
#                    check (the committed TypeScript declarations are what
#                    the sources generate), its napi build done as the
#                    release build below (zig, the same cargo target folder),
#                    so that this script's next build compiles only the
#                    binding crate again (napi always does, to collect its
#                    type definitions): the test run's node-declarations
#                    stage, then node-build
#   --no-pack        the module built into node/lib as below, and checked;
#                    no tarball (the demo's build: it then reuses this one's)
#
# It runs the package's `npm run build:native` (napi build --platform
# --release) once, which writes node/lib/ratekeeper.<platform>.node and
# napi's generated loader node/lib/binding.js; the tests then use that
# same build from the source tree. Then it writes to dist/, with `npm pack`:
#
#   ratekeeper-<version>.tgz             the main package: JavaScript, the
#                                        declarations, the loader, and an
#                                        optional dependency on each platform
#                                        package; no native code
#   ratekeeper-<platform>-<version>.tgz  node/npm/<platform>/ (napi's
#                                        create-npm-dirs layout) with the .node
#
# The platform package is assembled in a temporary folder, so node/npm/
# stays as committed. The release workflow publishes these tarballs as they
# are (`npm publish FILE.tgz`). Only this part's tarballs in dist/ are
# replaced. Needs node/node_modules (`npm ci` in node/, scripts/setup.sh).
#
# glibc: a linux-gnu module needs glibc 2.17 or newer (CentOS 7, RHEL 8,
# Ubuntu 14.04 and later), whatever glibc the machine that builds it has.
# A module linked as usual needs the builder's glibc (2.34 from a Debian 12
# build), so a linux-gnu target is built with `napi build --cross-compile
# --target TRIPLE.2.17`: cargo-zigbuild compiles the C code (mimalloc) and
# links with zig against glibc 2.17's symbols. Both are pinned in
# node/requirements-dist.txt (zig as the ziglang PyPI package, the Python
# wheel's version) and installed into the project's .venv
# (scripts/python-env.sh) when missing. cargo builds that in a target
# folder of its own, $CARGO_TARGET_DIR/node-zig (default target/node-zig):
# in the shared one, it and `npm run build` (the machine's own linker) each
# found the other's settings changed and rebuilt every crate, about 2 min
# each time.
# Every linux-gnu module, zig's or not, is then checked with readelf: the
# build fails if it needs a GLIBC_ symbol version newer than 2.17.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
self="$root/scripts/dist/node.sh"
cd "$root/node"

usage() {
  sed -n '5,28p' "$self" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

target=""
main=true
zig=true
mode=dist
napi_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) [ $# -ge 2 ] || usage; target="$2"; shift 2 ;;
    --target=*) target="${1#--target=}"; shift ;;
    --no-main) main=false; shift ;;
    --no-zig) zig=false; shift ;;
    --check-declarations) mode=check; shift ;;
    --no-pack) mode=build; shift ;;
    --) shift; napi_args=("$@"); break ;;
    -h | --help) sed -n '2,/^set -euo/p' "$self" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
    *) echo "scripts/dist/node.sh: unknown argument $1" >&2; usage ;;
  esac
done

# The triple → napi's platform name (the suffix of the .node and of the
# platform package), for every target package.json declares.
platform_of() {
  case "$1" in
    x86_64-unknown-linux-gnu) echo linux-x64-gnu ;;
    aarch64-unknown-linux-gnu) echo linux-arm64-gnu ;;
    x86_64-unknown-linux-musl) echo linux-x64-musl ;;
    x86_64-apple-darwin) echo darwin-x64 ;;
    aarch64-apple-darwin) echo darwin-arm64 ;;
    x86_64-pc-windows-msvc) echo win32-x64-msvc ;;
    *) return 1 ;;
  esac
}
triple="${target:-$(rustc -vV | sed -n 's/^host: //p')}"
targets="$(node -p "require('./package.json').napi.targets.join(' ')")"
platform="$(platform_of "$triple")" && [[ " $targets " == *" $triple "* ]] || {
  echo "scripts/dist/node.sh: $triple is not one of node/package.json's napi.targets: $targets" >&2
  exit 2
}

version="$(node -p "require('./package.json').version")"
platform_version="$(node -p "require('./npm/$platform/package.json').version")"
if [ "$platform_version" != "$version" ]; then
  echo "scripts/dist/node.sh: node/npm/$platform is at $platform_version, the package at $version (scripts/version.py set)" >&2
  exit 1
fi

# The oldest glibc a linux-gnu module may need (manylinux2014's, napi-rs's).
glibc_max=2.17
build=(npm run --silent build:native --)
case "$triple" in
  *-linux-gnu)
    # napi's own cross mechanisms, when asked for, build it their way.
    for arg in "${napi_args[@]}"; do
      case "$arg" in --use-napi-cross | --use-cross | --cross-compile | -x) zig=false ;; esac
    done
    ;;
  *) zig=false ;;
esac
if $zig; then
  # shellcheck source=../python-env.sh
  source "$root/scripts/python-env.sh"
  rk_python_requirements "$root/node/requirements-dist.txt"
  # napi runs `cargo zigbuild`, installing it unpinned when cargo finds
  # none: the venv's comes first. cargo-zigbuild takes zig from the venv's
  # python (`python -m ziglang`), before any zig on the PATH.
  export PATH="$RK_VENV/bin:$PATH" CARGO_ZIGBUILD_PYTHON_PATH="$RK_VENV/bin/python"
  cargo help zigbuild >/dev/null 2>&1 || { echo "scripts/dist/node.sh: cargo zigbuild not found in $RK_VENV" >&2; exit 1; }
  build+=(--cross-compile --target "$triple.$glibc_max")
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}/node-zig"
else
  [ -z "$target" ] || build+=(--target "$target")
fi
build+=("${napi_args[@]}")
if [ "$mode" = check ]; then
  # The build's own arguments (after `npm run --silent build:native --`).
  echo "node: node scripts/declarations.mjs check ${build[*]:5}"
  exec node scripts/declarations.mjs check "${build[@]:5}"
fi
echo "node: ${build[*]}"
"${build[@]}"
module="lib/ratekeeper.$platform.node"
[ -f "$module" ] || { echo "scripts/dist/node.sh: napi build wrote no $module" >&2; exit 1; }

if [[ "$triple" == *-linux-gnu ]]; then
  # The symbol versions the module needs from glibc (readelf reads any
  # architecture's ELF), the newest last.
  needed="$(readelf --version-info --wide "$module" | grep -o 'Name: GLIBC_[0-9.]*' | sed 's/.*GLIBC_//' | sort -u -V)"
  [ -n "$needed" ] || { echo "scripts/dist/node.sh: readelf found no GLIBC_ version in $module" >&2; exit 1; }
  newer() { [ "$1" != "$glibc_max" ] && [ "$(printf '%s\n' "$1" "$glibc_max" | sort -V | tail -n 1)" = "$1" ]; }
  if newer "$(tail -n 1 <<<"$needed")"; then
    echo "scripts/dist/node.sh: $module needs a glibc newer than $glibc_max:" >&2
    while read -r version; do
      if newer "$version"; then
        readelf --dyn-syms --wide "$module" | grep -o "[^ ]*@GLIBC_$version\b" | sort -u | sed 's/^/  /' >&2
      fi
    done <<<"$needed"
    exit 1
  fi
  echo "node: $module needs glibc $glibc_max at most (its GLIBC_ versions: $(paste -s -d ' ' <<<"$needed"))"
fi

[ "$mode" = dist ] || exit 0
dist="$root/dist"
mkdir -p "$dist"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp "npm/$platform/package.json" "npm/$platform/README.md" "$module" "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$stage/"
rm -f "$dist/ratekeeper-$platform-"*.tgz
packed="$(cd "$stage" && npm pack --silent --pack-destination "$dist" | tail -n 1)"
contents="$(tar -tzf "$dist/$packed")"
for file in "ratekeeper.$platform.node" LICENSE-MIT LICENSE-APACHE; do
  grep -qx "package/$file" <<<"$contents" || {
    echo "scripts/dist/node.sh: $packed holds no $file" >&2
    exit 1
  }
done
echo "node: dist/$packed"

if $main; then
  # The package's "files" name the licences; they live at the root.
  cp "$root/LICENSE-MIT" "$root/LICENSE-APACHE" .
  rm -f "$dist"/ratekeeper-[0-9]*.tgz
  packed="$(npm pack --silent --pack-destination "$dist" | tail -n 1)"
  contents="$(tar -tzf "$dist/$packed")"
  for file in lib/binding.js LICENSE-MIT LICENSE-APACHE README.md; do
    grep -qx "package/$file" <<<"$contents" || {
      echo "scripts/dist/node.sh: $packed holds no $file" >&2
      exit 1
    }
  done
  if grep '\.node$' <<<"$contents"; then
    echo "scripts/dist/node.sh: $packed holds a native module; those belong in the platform packages" >&2
    exit 1
  fi
  echo "node: dist/$packed"
fi
