#!/usr/bin/env bash
# `make dist`: every artifact of one release, all of one version, in dist/.
#
#   scripts/dist.sh              every part, in the order below
#   scripts/dist.sh PART...      only these parts: python node c crates
#
# Each part is scripts/dist/PART.sh, which replaces its own artifacts in
# dist/ and leaves the other parts' alone. The release workflow
# (.github/workflows/release.yml) runs the same scripts, so what runs here
# is what a release runs. tests/installed/ installs the artifacts as a user
# does, with the Rust toolchain out of reach.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

PARTS=(python node c crates)
usage() {
  echo "usage: scripts/dist.sh [PART...]   (parts: ${PARTS[*]})" >&2
  exit 2
}

chosen=()
for arg in "$@"; do
  case "$arg" in
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    python | node | c | crates) chosen+=("$arg") ;;
    *) echo "scripts/dist.sh: unknown part $arg" >&2; usage ;;
  esac
done
[ ${#chosen[@]} -gt 0 ] || chosen=("${PARTS[@]}")

export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
mkdir -p dist
for part in "${chosen[@]}"; do
  echo "=== dist: $part"
  "scripts/dist/$part.sh"
done
echo "=== dist/:"
(cd dist && find . -maxdepth 2 -type f | sort | sed 's|^\./|  |')
