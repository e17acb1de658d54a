#!/usr/bin/env bash
# Installs the C library into a temporary prefix with `make install`, then
# builds a C program *outside the repository* against it with nothing but
# pkg-config, shared and static, runs both, and uninstalls.
#
#   tests/c/install-check.sh
#
# The programs are examples/c/*.c, copied out of the tree.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

make -s --no-print-directory -C "$root" install PREFIX="$prefix"

mkdir "$tmp/app"
cd "$tmp/app"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
echo "pkg-config: ratekeeper $(pkg-config --modversion ratekeeper): $(pkg-config --cflags --libs ratekeeper)"

for example in rate_limit http_limits per_client; do
  cp "$root/examples/c/$example.c" "$tmp/app/$example.c"
  echo "--- $example"

  # Shared: the library is found at run time through LD_LIBRARY_PATH, as
  # for any library installed outside the loader's paths.
  cc -std=c11 -Wall -Wextra -Werror "$example.c" $(pkg-config --cflags --libs ratekeeper) -o "$example-shared"
  # (ldd's output is captured first: `ldd | grep -q` under pipefail fails
  # whenever grep exits before ldd has written everything.)
  libs="$(LD_LIBRARY_PATH="$prefix/lib" ldd "./$example-shared")"
  grep -q "$prefix/lib/libratekeeper.so" <<<"$libs" \
    || { echo "$example-shared does not load $prefix/lib/libratekeeper.so"; exit 1; }
  LD_LIBRARY_PATH="$prefix/lib" "./$example-shared"

  # Static: no libratekeeper.so needed at run time.
  cc -std=c11 -Wall -Wextra -Werror "$example.c" $(pkg-config --cflags --libs ratekeeper-static) -o "$example-static"
  libs="$(ldd "./$example-static")"
  ! grep -q libratekeeper <<<"$libs" || { echo "$example-static needs libratekeeper.so"; exit 1; }
  "./$example-static"
done

make -s --no-print-directory -C "$root" uninstall PREFIX="$prefix"
left="$(find "$prefix" -type f)"
[ -z "$left" ] || { echo "make uninstall left: $left"; exit 1; }
echo "install-check: built and ran the examples outside the repository against the installed library (shared and static)"
