#!/usr/bin/env bash
# Redrive past the cap on open executions: 40 executions whose wait times
# out after 5 s, the organization's cap set to 5, then 20 single
# redrives and a bulk redrive of the rest. Run it under
# tools/attacks/peakrss.sh; it prints how many redrives were taken and
# refused, the bulk operation's counts, and how many executions are
# WAITING afterwards.
set -euo pipefail
: "${CARDFLOW_URL:?run me under tools/attacks/peakrss.sh}"
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/bin/cardflow
api() { curl -sS -H "x-api-key: $1" -H 'content-type: application/json' "${@:2}"; }

wf=$(api "$ADMIN_KEY" "$CARDFLOW_URL/v1/workflows/saveWorkflow" -d '{"workflow_name": "hold", "workflow_steps": [
  {"id": "start", "name": "Start", "type": "trigger", "config": {"kind": "REQUEST"}},
  {"id": "hold", "name": "Hold", "type": "wait", "config": {"timeout": "PT5S"}},
  {"id": "done", "name": "Done", "type": "end", "config": {"status": "SUCCEEDED"}}],
  "workflow_connections": [{"from": "start", "to": "hold"}, {"from": "hold", "to": "done"}]}' | jq -r .item.workflow_id)
api "$ADMIN_KEY" "$CARDFLOW_URL/v1/workflows/publishWorkflow" -d "{\"workflow_id\": \"$wf\", \"workflow_version\": 1}" >/dev/null
ids=()
for _ in $(seq 40); do
	ids+=("$(api "$EXEC_KEY" "$CARDFLOW_URL/v1/workflows/triggerworkflow/$wf" -d '{}' | jq -r .service_execution_id)")
done
# count STATUS: how many of the 40 have it.
count() {
	local n=0 id
	for id in "${ids[@]}"; do
		api "$ADMIN_KEY" "$CARDFLOW_URL/v1/workflows/getWorkflowExecutionById?workflow_id=$wf&workflow_execution_id=$id" |
			jq -e --arg s "$1" '.item.status == $s' >/dev/null && n=$((n + 1))
	done
	echo "$n"
}
for _ in $(seq 100); do [ "$(count TIMED_OUT)" = 40 ] && break; sleep 0.2; done
echo "timed out: $(count TIMED_OUT)"
"$bin" limits set attack --max-open 5 >/dev/null
taken=0 refused=0
for id in "${ids[@]:0:20}"; do
	code=$(api "$EXEC_KEY" "$CARDFLOW_URL/v1/workflows/redriveExecution" -o /dev/null -w '%{http_code}' \
		-d "{\"workflow_id\": \"$wf\", \"workflow_execution_id\": \"$id\"}")
	if [ "$code" = 200 ]; then taken=$((taken + 1)); else refused=$((refused + 1)); fi
done
echo "single redrives: $taken taken, $refused refused"
op=$(api "$EXEC_KEY" "$CARDFLOW_URL/v1/workflows/startBulkOperation" -d "{\"action\": \"redrive\", \"workflow_id\": \"$wf\", \"status\": \"TIMED_OUT\"}" | jq -r '(.item // .).bulk_operation_id')
for _ in $(seq 100); do
	bulk=$(api "$ADMIN_KEY" "$CARDFLOW_URL/v1/workflows/getBulkOperation?bulk_operation_id=$op")
	[ "$(jq -r '(.item // .).status' <<<"$bulk")" = RUNNING ] || break
	sleep 0.05
done
echo "bulk redrive: $(jq -c '(.item // .) | {status, done, failed, skipped, first_failure: .failures[0].reason}' <<<"$bulk")"
echo "waiting now: $(count WAITING) (cap 5)"
