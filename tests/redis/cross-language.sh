#!/usr/bin/env bash
# The same distributed limiter from C, Python and Node.js:
#
#   tests/redis/cross-language.sh [LANGUAGE...]     (c python node; default: all three)
#
# Under one private Redis (tests/redis/with-redis, started here unless
# RATEKEEPER_REDIS_URL is already set), each language's admit program makes
# `check(KEY, 1)` calls on the same exact-mode GCRA limiter — max_burst 29,
# 30 per 60 s: 30 at once, then one every 2 s — with the same name and key
# (both with a non-ASCII character: the languages must send the same UTF-8
# bytes), and prints how many it admitted:
#
#   c       target/c/tests/redis_admit-shared NAME KEY N   (tests/c/redis_admit.c)
#   python  python/tests/redis_admit.py NAME KEY N         (in the project's venv)
#   node    node node/test/redis-admit.mjs NAME KEY N
#
# First one language after another, 12 calls each (36 > 30), then all at
# once, 10 each. The checks: the first language gets all 12 (a fresh limit);
# together they get at least 30 (the limit, no less) and never more than
# 30 + one per 2 s elapsed (the limit, no more) — which three separate
# limits would exceed at once.
#
# Nothing is skipped: a language whose program is missing, or whose package
# is not built, fails the test with a message saying what is missing. The
# Python package and the Node.js package must be built first (scripts/test.sh
# builds them before running this). CROSS_LANGUAGE_PYTHON and
# CROSS_LANGUAGE_NODE, when set, are the commands run instead of the Python
# and Node programs (e.g. `python3 /elsewhere/python/tests/redis_admit.py`):
# for trying a branch's program before it is merged.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

if [ -z "${RATEKEEPER_REDIS_URL:-}" ]; then
  exec tests/redis/with-redis "$0" "$@"
fi
# One server for every language (the Node program would prefer a cluster).
unset RATEKEEPER_REDIS_CLUSTER

languages=("$@")
[ ${#languages[@]} -gt 0 ] || languages=(c python node)

fail() {
  echo "cross-language: $*" >&2
  exit 1
}

# The command that runs LANGUAGE's admit program, in the array `command`;
# fails the test when it is missing.
command_for() {
  case "$1" in
    c)
      make -s --no-print-directory -C tests/c redis-admit >&2 || fail "c: could not build tests/c/redis_admit.c"
      local program="${CARGO_TARGET_DIR:-$root/target}/c/tests/redis_admit-shared"
      [ -x "$program" ] || fail "c: $program was not built"
      command=("$program")
      ;;
    python)
      if [ -n "${CROSS_LANGUAGE_PYTHON:-}" ]; then
        read -r -a command <<<"$CROSS_LANGUAGE_PYTHON"
        return
      fi
      [ -f python/tests/redis_admit.py ] ||
        fail "python: python/tests/redis_admit.py is missing (the Python package's side of this test): every language must take part"
      local venv="${RK_VENV:-$root/.venv}"
      [ -x "$venv/bin/python" ] || fail "python: no venv at $venv: build the package first (source scripts/python-env.sh; rk_python_package)"
      command=("$venv/bin/python" python/tests/redis_admit.py)
      ;;
    node)
      if [ -n "${CROSS_LANGUAGE_NODE:-}" ]; then
        read -r -a command <<<"$CROSS_LANGUAGE_NODE"
        return
      fi
      [ -f node/test/redis-admit.mjs ] ||
        fail "node: node/test/redis-admit.mjs is missing (the Node.js package's side of this test): every language must take part"
      command -v node >/dev/null || fail "node: node is not installed"
      command=(node node/test/redis-admit.mjs)
      ;;
    *) fail "unknown language '$1' (c, python or node)" ;;
  esac
}

declare -A commands
for language in "${languages[@]}"; do
  command_for "$language"
  commands[$language]="$(printf '%q ' "${command[@]}")"
done

name="cross-language-é-$$-$RANDOM"
key="user:José"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# admit LANGUAGE N FILE: runs LANGUAGE's program, its count into FILE.
admit() {
  local language="$1" n="$2" file="$3"
  if ! eval "${commands[$language]} \"\$name\" \"\$key\" \"\$n\"" >"$file" 2>"$file.err"; then
    cat "$file.err" >&2
    fail "$language: its admit program failed (status above)"
  fi
  local count
  count="$(cat "$file")"
  [[ "$count" =~ ^[0-9]+$ ]] || fail "$language: printed '$count', not a count"
  [ "$count" -le "$n" ] || fail "$language: admitted $count of $n calls"
}

start=$(date +%s.%N)
total=0
echo "cross-language: limiter '$name', key '$key', GCRA max_burst 29, 30 per 60 s"
first=true
for language in "${languages[@]}"; do
  admit "$language" 12 "$out/$language.seq"
  count=$(cat "$out/$language.seq")
  echo "  one after another: $language admitted $count of 12"
  if $first && [ "$count" -ne 12 ]; then
    fail "$language, first on a fresh limit of 30, admitted $count of 12"
  fi
  first=false
  total=$((total + count))
done

pids=()
for language in "${languages[@]}"; do
  admit "$language" 10 "$out/$language.par" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail "a language failed while all ran at once (see above)"; done
for language in "${languages[@]}"; do
  count=$(cat "$out/$language.par")
  echo "  all at once: $language admitted $count of 10"
  total=$((total + count))
done
end=$(date +%s.%N)

tries=$((22 * ${#languages[@]}))
# At most the burst of 30, plus one per 2 s since the first call.
bound=$(awk -v s="$start" -v e="$end" 'BEGIN { print 30 + int((e - s) / 2) }')
elapsed=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }')
echo "cross-language: $total admitted of $tries calls in ${elapsed} s (bound $bound)"
[ "$total" -le "$bound" ] || fail "$total admitted: more than one limit's $bound — the languages do not share the limiter"
if [ "$tries" -ge 30 ]; then
  [ "$total" -ge 30 ] || fail "$total admitted of $tries calls: fewer than the limit of 30"
fi
echo "cross-language: ${languages[*]} share one limit"
