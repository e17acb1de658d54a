#!/usr/bin/env bash
# Installs the C library into a temporary prefix with `make install`, then
# builds a C program *outside the repository* against it with nothing but
# pkg-config, shared and static, runs both, and uninstalls.
#
#   tests/c/install-check.sh
#
# The program is examples/c/rate_limit.c, copied out of the tree.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

make -s --no-print-directory -C "$root" install PREFIX="$prefix"

mkdir "$tmp/app"
cp "$root/examples/c/rate_limit.c" "$tmp/app/app.c"
cd "$tmp/app"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
echo "pkg-config: ratekeeper $(pkg-config --modversion ratekeeper): $(pkg-config --cflags --libs ratekeeper)"

# Shared: the library is found at run time through LD_LIBRARY_PATH, as for
# any library installed outside the loader's paths.
cc -std=c11 -Wall -Wextra -Werror app.c $(pkg-config --cflags --libs ratekeeper) -o app-shared
LD_LIBRARY_PATH="$prefix/lib" ldd ./app-shared | grep -q "$prefix/lib/libratekeeper.so" \
  || { echo "app-shared does not load $prefix/lib/libratekeeper.so"; exit 1; }
LD_LIBRARY_PATH="$prefix/lib" ./app-shared

# Static: no libratekeeper.so needed at run time.
cc -std=c11 -Wall -Wextra -Werror app.c $(pkg-config --cflags --libs ratekeeper-static) -o app-static
! ldd ./app-static | grep -q libratekeeper || { echo "app-static needs libratekeeper.so"; exit 1; }
./app-static

make -s --no-print-directory -C "$root" uninstall PREFIX="$prefix"
left="$(find "$prefix" -type f)"
[ -z "$left" ] || { echo "make uninstall left: $left"; exit 1; }
echo "install-check: built and ran a program outside the repository against the installed library (shared and static)"
