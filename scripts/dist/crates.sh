#!/usr/bin/env bash
# Part of `make dist` (scripts/dist.sh crates): the Rust crates published to
# crates.io, as `cargo publish` would upload them, in dist/crates/.
#
#   scripts/dist/crates.sh
#
# 1. The crates published are exactly PUBLISHED below: every other member of
#    the workspace says `publish = false`, so `cargo publish --workspace`
#    (what the release workflow runs) uploads these and nothing else.
# 2. `cargo doc` of them with rustdoc's warnings as errors (docs.rs builds
#    these pages; a broken intra-doc link fails here, not there).
# 3. `cargo publish --dry-run` of them together: cargo (>= 1.90) packages the
#    crates that depend on one another, resolves each against the others'
#    packages rather than crates.io, and builds every package from its
#    .crate alone — no path-only dependency, no file outside the crate.
#    Then `cargo package --no-verify` writes the same .crate files where
#    cargo documents them (the dry run keeps its own in a scratch folder);
#    no second verification: the dry run just built these bytes.
# 4. Each .crate holds its README and both licences, and its manifest no
#    path; the .crate files replace dist/crates/*.crate.
#
# The crates are source: the same on every target, so there is no --target.
# CARGO_TARGET_DIR is honoured (the packages are built under it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

PUBLISHED=(ratekeeper-core ratekeeper ratekeeper-redis ratekeeper-cli ratekeeper-tower)

[ $# -eq 0 ] || { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# Publishing crates that depend on one another in one command: cargo 1.90.
cargo_minor=$(cargo --version | sed -E 's/^cargo 1\.([0-9]+).*/\1/')
[ "$cargo_minor" -ge 90 ] || { echo "scripts/dist/crates.sh: needs cargo >= 1.90 ($(cargo --version))" >&2; exit 1; }

metadata=$(cargo metadata --format-version 1 --no-deps --locked)
field() { python3 -c "import json, sys; meta = json.load(sys.stdin); print($1)" <<<"$metadata"; }
target_dir=$(field 'meta["target_directory"]')
version=$(field '{p["name"]: p["version"] for p in meta["packages"]}["ratekeeper"]')

echo "--- the publishable members are ${PUBLISHED[*]}"
# shellcheck disable=SC2016 # Python's code, not the shell's
python3 -c '
import json, sys
meta = json.load(sys.stdin)
# `publish = false` is [] here; an absent key (null) means crates.io.
found = sorted(p["name"] for p in meta["packages"] if p["publish"] != [])
want = sorted(sys.argv[1:])
if found != want:
    sys.exit(f"publishable members: {found}, but scripts/dist/crates.sh publishes {want}:"
             " add the new crate to PUBLISHED, or give it `publish = false`")
' "${PUBLISHED[@]}" <<<"$metadata"

packages=()
for crate in "${PUBLISHED[@]}"; do packages+=(-p "$crate"); done

echo "--- cargo doc (RUSTDOCFLAGS=-D warnings)"
# --lib: ratekeeper-cli's binary is also called ratekeeper; its pages would
# land where the library's go.
RUSTDOCFLAGS="${RUSTDOCFLAGS:-} -D warnings" cargo doc --locked --no-deps --lib "${packages[@]}"

echo "--- cargo publish --dry-run"
# The dry run verifies each crate against the others through a local
# registry in target/package, whose sources cargo extracts once under
# $CARGO_HOME/registry/src/-HASH/ (the hash of that folder's path) and then
# reuses while they exist: a second checkout at the same path, later, would
# be verified against the first one's crates. Drop such extractions of ours.
for extracted in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/; do
  for crate in "${PUBLISHED[@]}"; do rm -rf "$extracted$crate-$version"; done
done
cargo publish --dry-run --locked "${packages[@]}"
rm -f "$target_dir"/package/*.crate
cargo package --no-verify --locked "${packages[@]}"

mkdir -p dist/crates
rm -f dist/crates/*.crate
for crate in "${PUBLISHED[@]}"; do
  file="$target_dir/package/$crate-$version.crate"
  listing=$(tar -tzf "$file")
  for member in README.md LICENSE-MIT LICENSE-APACHE Cargo.toml; do
    grep -qx "$crate-$version/$member" <<<"$listing" \
      || { echo "$file: no $member in the package" >&2; exit 1; }
  done
  if tar -xzOf "$file" "$crate-$version/Cargo.toml" | grep -n '^[^#]*\bpath *= *"\.\.' >&2; then
    echo "$file: a path outside the package in its manifest" >&2
    exit 1
  fi
  cp "$file" dist/crates/
done
ls -l dist/crates
