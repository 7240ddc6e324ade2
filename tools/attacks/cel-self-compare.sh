#!/usr/bin/env bash
# Attack: a transform step compares a shared structure of depth 28 with
# itself: a few cost units, 2^28 comparisons. CANCEL_AFTER=SECONDS cancels
# the execution that long after the trigger and prints the server's CPU
# time in the 3 s after.
#   tools/attacks/peakrss.sh tools/attacks/cel-self-compare.sh
set -euo pipefail
. "$(dirname "$0")/cel-common.sh"
depth=${DEPTH:-28}
body=$(mktemp); trap 'rm -f "$body"' EXIT
echo '{"s": "x"}' >"$body"
run_transform "{{ $(nested_binds "$depth" "l$depth == l$depth") }}" "$body"
