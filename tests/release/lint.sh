#!/usr/bin/env bash
# The release-lint stage: actionlint, with shellcheck on every `run:`
# script, on .github/workflows/*.yml; then the same on
# tests/release/broken-workflow.yml, which must fail with each of its
# mistakes reported, so that a linter that checks nothing (shellcheck
# missing, a wrapper that exits 0) cannot pass the stage.
#
#   tests/release/lint.sh        (after scripts/setup.sh, which installs both)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=scripts/python-env.sh
source scripts/python-env.sh
actionlint="$RK_VENV/bin/actionlint"
[ -x "$actionlint" ] || { echo "no $actionlint: run scripts/setup.sh" >&2; exit 1; }
shellcheck="$(command -v shellcheck)" || { echo "no shellcheck: run scripts/setup.sh" >&2; exit 1; }

"$actionlint" -version | head -1
"$actionlint" -shellcheck "$shellcheck" .github/workflows/*.yml
echo "actionlint: .github/workflows/*.yml pass"

status=0
out="$("$actionlint" -shellcheck "$shellcheck" -no-color tests/release/broken-workflow.yml 2>&1)" || status=$?
if [ "$status" -ne 1 ]; then
  echo "$out" >&2
  echo "actionlint exited $status on tests/release/broken-workflow.yml, not 1 (errors found)" >&2
  exit 1
fi
missing=()
for expected in '"fetch-everything" is not defined' 'property "triple" is not defined' SC2045 'needs job "collect" which does not exist'; do
  grep -qF -- "$expected" <<<"$out" || missing+=("$expected")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "$out" >&2
  printf 'actionlint did not report: %s\n' "${missing[@]}" >&2
  exit 1
fi
echo "actionlint: each mistake of tests/release/broken-workflow.yml reported"
