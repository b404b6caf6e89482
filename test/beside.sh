#!/bin/sh
# npm test: vitest, with lint and the typecheck beside it at the lowest CPU priority (nice 19).
#
# The tests spend much of their time waiting on child processes, servers and timers, so two
# workers leave a good share of two cores idle; lint and the typecheck (~80 and ~25 CPU-s) fill
# that instead of running before the tests (pretest now only builds dist/, which the tests run).
# At nice 19 they take a core only when a test does not want it, so the tests' timing is what it
# was. Their output goes to a file and is printed after the tests: in full when one fails (and
# then npm test fails), else one line each.
set -u
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

start=$(date +%s)
(nice -n 19 npm run --silent lint >"$out/lint" 2>&1; echo $? >"$out/lint.rc"; echo $(($(date +%s) - start)) >"$out/lint.s") &
lint=$!
(nice -n 19 npm run --silent typecheck >"$out/typecheck" 2>&1; echo $? >"$out/typecheck.rc"; echo $(($(date +%s) - start)) >"$out/typecheck.s") &
typecheck=$!

vitest run "$@"
tests=$?

wait "$lint" "$typecheck"
failed=0
for check in lint typecheck; do
  rc="$(cat "$out/$check.rc" 2>/dev/null || echo 1)"
  if [ "$rc" = 0 ]; then
    echo "npm test: $check passed (done $(cat "$out/$check.s") s after the start, beside the tests)"
  else
    failed=1
    echo "npm test: $check FAILED (exit $rc):" >&2
    cat "$out/$check" >&2
  fi
done

if [ "$tests" != 0 ]; then exit "$tests"; fi
exit "$failed"
