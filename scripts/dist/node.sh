#!/usr/bin/env bash
# The Node.js part of `make dist`: napi-rs's layout, the native module built
# once.
#
#   scripts/dist/node.sh [--target TRIPLE] [--no-main] [-- NAPI_BUILD_ARG...]
#
#   --target TRIPLE  a Rust target triple, one of node/package.json's
#                    napi.targets; default: this machine's (then cargo builds
#                    into $CARGO_TARGET_DIR/release, as `npm run build` does)
#   --no-main        write only the platform package: the main one holds no
#                    native code, so a release's matrix needs it from one job
#   -- ARG...        passed on to `napi build`, e.g. --use-napi-cross or
#                    --cross-compile for another machine's target
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
# A linux-gnu module needs the glibc of the machine that built it (2.34
# here): a release builds those where glibc is old, in napi-rs's build
# image or with `-- --use-napi-cross` (glibc 2.17; it needs the matching
# @napi-rs/cross-toolchain-<host>-target-<arch> package installed).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
self="$root/scripts/dist/node.sh"
cd "$root/node"

usage() {
  sed -n '5,14p' "$self" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

target=""
main=true
napi_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --target) [ $# -ge 2 ] || usage; target="$2"; shift 2 ;;
    --target=*) target="${1#--target=}"; shift ;;
    --no-main) main=false; shift ;;
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

build=(npm run --silent build:native --)
[ -z "$target" ] || build+=(--target "$target")
build+=("${napi_args[@]}")
echo "node: ${build[*]}"
"${build[@]}"
module="lib/ratekeeper.$platform.node"
[ -f "$module" ] || { echo "scripts/dist/node.sh: napi build wrote no $module" >&2; exit 1; }

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
