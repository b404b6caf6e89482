#!/bin/sh
# npm test: vitest, with lint and the typecheck beside it at the lowest CPU priority (nice 19).
#
# The tests spend much of their time waiting on child processes, servers and timers, so two
# workers leave a share of two cores idle; lint and the typecheck (~80 and ~25 CPU-s) fill that,
# and the core tsc's build of dist/ leaves idle, instead of running before the tests. At nice 19
# they take a core only when the build or a test does not want it, so the tests' timing is what
# it was. Their output goes to a file and is printed after the tests: in full when one fails (and
# then npm test fails), else one line each. docs/reliability.md "CI time, a second pass".
set -u
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
start=$(date +%s)

# One check in the background: its exit code and when it ended go to $out/<name>.rc. A background
# job of a non-interactive shell ignores SIGINT, so it is stopped by SIGTERM (see the trap below).
check() {
  nice -n 19 npm run --silent "$1" >"$out/$1" 2>&1 &
  pid=$!
  trap 'kill "$pid" 2>/dev/null' TERM
  wait "$pid"
  rc=$?
  echo "$rc $(($(date +%s) - start))" >"$out/$1.rc"
}
check lint &
lint=$!
check typecheck &
typecheck=$!
trap 'kill "$lint" "$typecheck" 2>/dev/null; exit 130' INT TERM

# The build (one core, ~18 s) leaves the other core to the checks; the tests run dist/.
if npm run --silent build; then
  vitest run "$@"
  tests=$?
else
  tests=$?
  echo "npm test: the build failed; no tests run" >&2
fi

wait "$lint" "$typecheck"
failed=0
for name in lint typecheck; do
  read -r rc took <"$out/$name.rc" || rc=1
  if [ "$rc" = 0 ]; then
    echo "npm test: $name passed (done ${took}s after the start, beside the tests)"
  else
    failed=1
    echo "npm test: $name FAILED (exit $rc):" >&2
    cat "$out/$name" >&2
  fi
done

if [ "$tests" != 0 ]; then exit "$tests"; fi
exit "$failed"
