#!/usr/bin/env bash
# Runs every Go fuzz target of the module for FUZZTIME each (default 30s).
# Targets are found, not listed: any `func Fuzz...(f *testing.F)` in a test
# file is run, so a new target needs no change here. A crash, a build
# failure or a hang (a run outliving go test's -timeout, two minutes past
# FUZZTIME) fails the run; `go test` writes a failing input to the package's
# testdata/fuzz/, ready to commit as a regression seed.
#
#   tools/fuzz/run.sh                    every target, 30s each
#   FUZZTIME=5s tools/fuzz/run.sh expr   targets in packages matching "expr"
set -euo pipefail
cd "$(dirname "$0")/../.."

fuzztime=${FUZZTIME:-30s}
filter=${1:-}
case "$fuzztime" in
*s) limit="$(( ${fuzztime%s} + 120 ))s" ;;
*m) limit="$(( ${fuzztime%m} + 2 ))m" ;;
*) echo "fuzz: FUZZTIME is seconds (30s) or minutes (2m), not $fuzztime" >&2; exit 2 ;;
esac

# Directories holding a fuzz target, then the targets each package lists.
dirs=$(grep -rlE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' cmd pkg internal 2>/dev/null | xargs -r -n1 dirname | sort -u)
[ -n "$dirs" ] || { echo "fuzz: no fuzz targets found" >&2; exit 1; }

failed=()
ran=0
for dir in $dirs; do
	[ -z "$filter" ] || [[ "$dir" == *"$filter"* ]] || continue
	for target in $(go test -list '^Fuzz' "./$dir" | grep '^Fuzz'); do
		echo "fuzz: $dir $target for $fuzztime"
		ran=$((ran + 1))
		if ! go test -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -timeout "$limit" -parallel 2 "./$dir"; then
			failed+=("$dir $target")
		fi
	done
done
echo "fuzz: ran $ran targets"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'fuzz: FAILED %s\n' "${failed[@]}" >&2
	exit 1
fi
