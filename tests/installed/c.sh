#!/usr/bin/env bash
# The C tarball installed as a user installs it: unpacked into a new prefix
# outside the repository, C programs built against it with nothing but
# pkg-config (shared and static) and run, all under
# tests/installed/without-toolchain --allow-cc (no cargo, no rustc; the C
# compiler stays, the user's own).
#
#   tests/installed/c.sh [TARBALL]    default: dist/ratekeeper-VERSION-HOST.tar.gz
#                                     (scripts/dist/c.sh writes it)
#
# It checks the versioned layout (libratekeeper.so.X.Y.Z, the soname link,
# libratekeeper.so), the library's soname, that the relocated pkg-config
# files point into the new prefix and carry the version, that a program
# records the soname (not libratekeeper.so) and runs with only the
# versioned file and the soname link present, that the static program
# needs no libratekeeper.so, and that the header's RK_VERSION_* macros are
# the library's rk_version() and pkg-config's version. Then `make install`
# and `make uninstall` into a DESTDIR (the release build is already there:
# nothing is rebuilt): the same layout, absolute pkg-config files, and
# nothing left behind.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
eval "$(make -s --no-print-directory -C "$root" c-names)" # RK_VERSION, RK_SONAME, RK_REALNAME
host="$(rustc -vV | sed -n 's/^host: //p')"
tarball="$(realpath "${1:-$root/dist/ratekeeper-$RK_VERSION-$host.tar.gz}")"
[ -f "$tarball" ] || { echo "tests/installed/c.sh: no $tarball (scripts/dist/c.sh writes it)" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/app"
for example in rate_limit http_limits per_client; do
  cp "$root/examples/c/$example.c" "$tmp/app/"
done

# What a user does, with no Rust toolchain: $1 the tarball, $2 a new
# folder outside the repository, $3..$5 the version, soname and file name.
as_a_user() {
  set -euo pipefail
  local tarball="$1" tmp="$2" version="$3" soname="$4" realname="$5"
  fail() { echo "tests/installed/c.sh: $*" >&2; exit 1; }
  needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

  local prefix="$tmp/prefix"
  mkdir "$prefix"
  tar -xzf "$tarball" -C "$prefix" --strip-components=1
  echo "unpacked $(basename "$tarball") into $prefix"

  local lib="$prefix/lib"
  if [ ! -f "$lib/$realname" ] || [ -L "$lib/$realname" ]; then fail "no file $lib/$realname"; fi
  [ "$(readlink "$lib/$soname")" = "$realname" ] || fail "$soname is not a link to $realname"
  [ "$(readlink "$lib/libratekeeper.so")" = "$soname" ] || fail "libratekeeper.so is not a link to $soname"
  if [ ! -f "$lib/libratekeeper.a" ] || [ ! -f "$prefix/include/ratekeeper.h" ]; then fail "no libratekeeper.a or ratekeeper.h"; fi
  local own
  own="$(readelf -d "$lib/$realname" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
  [ "$own" = "$soname" ] || fail "$realname's soname is '$own', not $soname"
  echo "layout: $realname (soname $own), $soname -> $realname, libratekeeper.so -> $soname, libratekeeper.a"

  export PKG_CONFIG_PATH="$lib/pkgconfig"
  local pc
  for pc in ratekeeper ratekeeper-static; do
    [ "$(pkg-config --modversion "$pc")" = "$version" ] || fail "$pc.pc's version is not $version"
    [ "$(realpath "$(pkg-config --variable=libdir "$pc")")" = "$(realpath "$lib")" ] \
      || fail "$pc.pc's libdir is not $lib (not relocated)"
  done
  echo "pkg-config: ratekeeper $version: $(pkg-config --cflags --libs ratekeeper)"

  # A run time with only what a program needs: the library and its soname.
  local runtime="$tmp/runtime"
  mkdir "$runtime"
  cp -P "$lib/$realname" "$lib/$soname" "$runtime/"

  cd "$tmp/app"
  cat >version.c <<'C'
#include <stdio.h>
#include <string.h>
#include <ratekeeper.h>

/* The header's macros, the library's rk_version() and pkg-config's
 * version (EXPECTED) are one version. */
int main(void) {
  char from_macros[64];
  snprintf(from_macros, sizeof from_macros, "%d.%d.%d", RK_VERSION_MAJOR, RK_VERSION_MINOR, RK_VERSION_PATCH);
  if (strcmp(rk_version(), EXPECTED) != 0 || strncmp(from_macros, EXPECTED, strlen(from_macros)) != 0
      || RK_VERSION_NUMBER != RK_VERSION_MAJOR * 1000000 + RK_VERSION_MINOR * 1000 + RK_VERSION_PATCH) {
    fprintf(stderr, "version: header %s (%d), library %s, pkg-config %s\n", from_macros, RK_VERSION_NUMBER,
            rk_version(), EXPECTED);
    return 1;
  }
  printf("version: header %s (RK_VERSION_NUMBER %d) = rk_version() = pkg-config's\n", from_macros, RK_VERSION_NUMBER);
  return 0;
}
C
  local program libs link
  for program in version rate_limit http_limits per_client; do
    echo "--- $program"
    local flags=(-std=c11 -Wall -Wextra -Werror)
    [ "$program" = version ] && flags+=("-DEXPECTED=\"$version\"")

    # Shared: the binary records the soname, and runs with nothing but the
    # versioned file and that link (no libratekeeper.so, no .a).
    read -r -a link <<<"$(pkg-config --cflags --libs ratekeeper)"
    cc "${flags[@]}" "$program.c" "${link[@]}" -o "$program-shared"
    # (Outputs are captured first: `ldd | grep -q` under pipefail fails
    # whenever grep exits before ldd has written everything.)
    libs="$(needed "$program-shared")"
    grep -qxF "$soname" <<<"$libs" || fail "$program-shared does not need $soname: $libs"
    ! grep -qxF libratekeeper.so <<<"$libs" || fail "$program-shared needs the unversioned libratekeeper.so"
    libs="$(LD_LIBRARY_PATH="$runtime" ldd "./$program-shared")"
    grep -qF "$soname => $runtime/$soname" <<<"$libs" || fail "$program-shared does not load $runtime/$soname: $libs"
    LD_LIBRARY_PATH="$runtime" "./$program-shared"

    # Static: no libratekeeper.so needed at run time.
    read -r -a link <<<"$(pkg-config --cflags --libs ratekeeper-static)"
    cc "${flags[@]}" "$program.c" "${link[@]}" -o "$program-static"
    libs="$(needed "$program-static")"
    ! grep -q libratekeeper <<<"$libs" || fail "$program-static needs libratekeeper.so"
    "./$program-static"
  done
}
export -f as_a_user
"$root/tests/installed/without-toolchain" --allow-cc \
  bash -c 'as_a_user "$@"' _ "$tarball" "$tmp" "$RK_VERSION" "$RK_SONAME" "$RK_REALNAME"

echo "--- make install, make uninstall (DESTDIR)"
destdir="$tmp/destdir"
make -s --no-print-directory -C "$root" install DESTDIR="$destdir" PREFIX=/usr/local
lib="$destdir/usr/local/lib"
if [ "$(readlink "$lib/$RK_SONAME")" != "$RK_REALNAME" ] || [ "$(readlink "$lib/libratekeeper.so")" != "$RK_SONAME" ] \
  || [ ! -f "$lib/$RK_REALNAME" ]; then
  echo "make install: not the versioned layout in $lib" >&2
  exit 1
fi
if ! grep -qxF "prefix=/usr/local" "$lib/pkgconfig/ratekeeper.pc" || ! grep -qxF "Version: $RK_VERSION" "$lib/pkgconfig/ratekeeper.pc"; then
  echo "make install: ratekeeper.pc has not prefix=/usr/local and Version: $RK_VERSION" >&2
  exit 1
fi
make -s --no-print-directory -C "$root" uninstall DESTDIR="$destdir" PREFIX=/usr/local
left="$(find "$destdir" ! -type d)"
[ -z "$left" ] || { echo "make uninstall left: $left" >&2; exit 1; }
echo "c installed: the tarball unpacked to a new prefix, programs built with pkg-config (shared and static) and run" \
  "with only $RK_REALNAME and $RK_SONAME; make install and uninstall"
