#!/usr/bin/env bash
# The C library's release artifact (scripts/dist.sh c, `make dist`): the
# tree `make install` writes, as a tarball that works wherever it is
# unpacked.
#
#   scripts/dist/c.sh [--target TRIPLE]
#
#   --target TRIPLE  a Rust target triple (cargo build --target): its
#                    standard library installed (rustup target add TRIPLE)
#                    and a linker for it configured, as cargo needs
#                    (CARGO_TARGET_<TRIPLE>_LINKER), and a strip for its
#                    architecture (STRIP, below). Linux (ELF) targets only:
#                    the soname and the static library's system libraries
#                    are known for those. Default: the host's triple, built
#                    without --target, where `make install` builds
#                    (target/release).
#
#   STRIP=TOOL       (environment) strips the shipped copies; default
#                    strip for the host's architecture, else the triple
#                    without "-unknown" and "-strip" appended
#                    (aarch64-linux-gnu-strip).
#
# Builds libratekeeper once (cargo build --release -p ratekeeper-c, by
# `make install`), installs it into a staging prefix with
# `make install RELOCATABLE=1`, checks the library's soname, strips the
# debug information from the copies, and writes
#
#   dist/ratekeeper-VERSION-TRIPLE.tar.gz
#
# replacing that target's earlier tarballs and nothing else in dist/. Its
# one top directory, ratekeeper-VERSION-TRIPLE/, is a prefix:
#
#   include/ratekeeper.h
#   lib/libratekeeper.so.X.Y.Z, its soname link, libratekeeper.so, libratekeeper.a
#   lib/pkgconfig/ratekeeper.pc, ratekeeper-static.pc   (prefix=${pcfiledir}/../..)
#   share/doc/ratekeeper/   README.md, CHANGELOG.md, LICENSE-*
#
# so `tar -xzf FILE -C PREFIX --strip-components=1` and
# PKG_CONFIG_PATH=PREFIX/lib/pkgconfig is an install (tests/installed/c.sh
# does just that). The archive is reproducible: sorted, owned by root, dated
# SOURCE_DATE_EPOCH (default: the last commit's time), gzip -6 (-9 took six
# times as long here for 1 % less).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

target=""
while [ $# -gt 0 ]; do
  case "$1" in
    --target) [ $# -ge 2 ] || { echo "scripts/dist/c.sh: --target needs a triple" >&2; exit 2; }; target="$2"; shift 2 ;;
    --target=*) target="${1#--target=}"; shift ;;
    -h | --help) sed -n '2,42p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scripts/dist/c.sh: unknown argument $1 (usage: scripts/dist/c.sh [--target TRIPLE])" >&2; exit 2 ;;
  esac
done

host="$(rustc -vV | sed -n 's/^host: //p')"
triple="${target:-$host}"
case "$triple" in
  *-linux-*) ;;
  *) echo "scripts/dist/c.sh: $triple is not a Linux target; only those are packaged (see --help)" >&2; exit 2 ;;
esac
# The host's own triple builds where the C tests' and `make install`'s
# release builds go; another triple goes to target/TRIPLE.
make_target=()
[ "$triple" = "$host" ] || make_target=(RK_TARGET="$triple")

names="$(make -s --no-print-directory -C "$root" c-names "${make_target[@]}")"
eval "$names" # RK_VERSION, RK_SONAME, RK_REALNAME
name="ratekeeper-$RK_VERSION-$triple"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/$name"
make -s --no-print-directory -C "$root" install PREFIX="$prefix" RELOCATABLE=1 "${make_target[@]}"

# The library answers to the name c.mk and install.mk gave its links
# (bindings/c/build.rs set it; the two must agree).
soname="$(readelf -d "$prefix/lib/$RK_REALNAME" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
[ "$soname" = "$RK_SONAME" ] \
  || { echo "scripts/dist/c.sh: $RK_REALNAME's soname is '$soname', not $RK_SONAME" >&2; exit 1; }

# The shipped copies without their debug information (cargo's release
# profile keeps line tables; a user's `make install` keeps them too): the
# .so goes from about 29 MB to 4, the .a from 87 to 33. The .so keeps its
# dynamic symbols, the .a its symbols. STRIP names the tool for another
# architecture (default strip for the host's, else TRIPLE-without-unknown-strip,
# e.g. aarch64-linux-gnu-strip).
strip_tool="${STRIP:-}"
if [ -z "$strip_tool" ]; then
  if [ "${triple%%-*}" = "${host%%-*}" ]; then strip_tool="strip"; else strip_tool="${triple/-unknown/}-strip"; fi
fi
"$strip_tool" --strip-unneeded "$prefix/lib/$RK_REALNAME"
"$strip_tool" --strip-debug "$prefix/lib/libratekeeper.a"

install -d "$prefix/share/doc/ratekeeper"
install -m 644 README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE "$prefix/share/doc/ratekeeper/"

mkdir -p dist
rm -f dist/ratekeeper-*-"$triple".tar.gz
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}"
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -cf - "$name" \
  | gzip -6 -n >"dist/$name.tar.gz"
echo "dist/$name.tar.gz: $(du -k "dist/$name.tar.gz" | cut -f1) KiB;" \
  "$RK_REALNAME $(du -k "$prefix/lib/$RK_REALNAME" | cut -f1) KiB, libratekeeper.a $(du -k "$prefix/lib/libratekeeper.a" | cut -f1) KiB (unpacked)"
