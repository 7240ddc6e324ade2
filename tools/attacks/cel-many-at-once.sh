#!/usr/bin/env bash
# Many executions at once (N, default 100) of a workflow whose transform
# step builds as much as the cost limit lets one evaluation build: it
# splits a 1000-character trigger field into characters 25 times, 25,000
# strings (a string costs about a unit per ten bytes built, so the cost
# limit, not the 16 MiB of MaxBuiltBytes, is what bounds an evaluation of
# strings). Each evaluation is within its bounds; what the server holds is
# how many run together. Run it under tools/attacks/peakrss.sh.
set -euo pipefail
: "${CARDFLOW_URL:?run me under tools/attacks/peakrss.sh}"
H=(-sS -H "content-type: application/json")
out='{{ size(lists.range(25).map(i, input.s.split(""))) }}'
. "$(dirname "$0")/cel-common.sh"
wf=$(publish_transform "$out")
body=$(jq -cn '{s: ("x" * 1000)}')
n=${N:-100}
echo "$n executions at once"
ids=$(mktemp)
trap 'rm -f "$ids"' EXIT
for _ in $(seq "$n"); do
	curl "${H[@]}" -H "x-api-key: $EXEC_KEY" -d "$body" "$CARDFLOW_URL/v1/workflows/triggerworkflow/$wf" | jq -r '.service_execution_id // .message' &
done >"$ids"
wait
# Wait for each to end, then count how they ended.
while read -r ex; do
	curl "${H[@]}" --max-time 30 -H "x-api-key: $READ_KEY" \
		"$CARDFLOW_URL/v1/workflows/waitForExecution?workflow_id=$wf&workflow_execution_id=$ex&timeout=25" |
		jq -r '"\(.item.status // .message) \(.item.workflow_output_payload // "" | tostring | .[0:120])"'
done <"$ids" | sort | uniq -c
