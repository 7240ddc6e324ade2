#!/usr/bin/env bash
# Attack: a transform step builds a list that repeats a 60 KB input through
# shared references, doubling at each of 14 levels (960 MB as JSON).
#   tools/attacks/peakrss.sh tools/attacks/cel-shared-list.sh
set -euo pipefail
. "$(dirname "$0")/cel-common.sh"
depth=${DEPTH:-14}
body=$(mktemp); trap 'rm -f "$body"' EXIT
printf '{"s": "%s"}' "$(head -c 60000 /dev/zero | tr '\0' a)" >"$body"
run_transform "{{ $(nested_binds "$depth" "l$depth") }}" "$body"
