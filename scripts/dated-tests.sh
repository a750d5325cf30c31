#!/usr/bin/env bash
# The date-sensitive tests: every top-level test function whose own body
# reads the test clock (testenv.Now, testenv.NewClock, or an env's or a
# stack's clock: `clock.Now(`). Prints one line per package,
#   ./pkg/dir<TAB>^(TestA|TestB)$
# for `go test -run`. `make test-dates` runs them at each pinned instant
# (testenv.PinnedInstants); a test that builds an expectation from the date
# reads the clock, so it is picked up here without a list to keep.
# Fails when it finds none: the pattern no longer matches what tests write.
set -euo pipefail
cd "$(dirname "$0")/.."

found=$(find pkg cmd -name '*_test.go' -print0 | xargs -0 awk '
  /^func Test[A-Za-z0-9_]*\(/ { name = $2; sub(/\(.*/, "", name); inside = 1; dated = 0; next }
  inside && /testenv\.Now\(|testenv\.NewClock\(|clock\.Now\(/ { dated = 1 }
  inside && /^}/ { if (dated) { dir = FILENAME; sub(/\/[^\/]*$/, "", dir); print dir "\t" name } inside = 0 }
' | sort -u)

if [ -z "$found" ]; then
  echo "dated-tests: no test reads the test clock; the pattern in $0 is out of date" >&2
  exit 1
fi

printf '%s\n' "$found" | awk -F'\t' '
  { tests[$1] = ($1 in tests) ? tests[$1] "|" $2 : $2 }
  END { for (d in tests) printf "./%s\t^(%s)$\n", d, tests[d] }
' | sort
