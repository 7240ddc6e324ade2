#!/usr/bin/env bash
# What a workflow's http steps learn of the deployment: a call to a name
# that does not resolve, one to a port where nothing listens, and one to
# the server's own /metrics. Run it under tools/attacks/peakrss.sh with
# loopback allowed, as a deployment that calls a local mock would:
#
#   CARDFLOW_OUTBOUND_ALLOW=127.0.0.1 tools/attacks/peakrss.sh tools/attacks/step-addresses.sh
#
# It prints each execution's status and error, or the start of its output.
set -euo pipefail
: "${CARDFLOW_URL:?run me under tools/attacks/peakrss.sh}"
api() { curl -sS -H "x-api-key: $1" -H 'content-type: application/json' "${@:2}"; }

wf=$(api "$ADMIN_KEY" "$CARDFLOW_URL/v1/workflows/saveWorkflow" -d '{"workflow_name": "probe", "workflow_steps": [
  {"id": "start", "name": "Start", "type": "trigger", "config": {"kind": "REQUEST"}},
  {"id": "call", "name": "Call", "type": "http", "config": {"method": "GET", "url": "{{ input.url }}", "timeout": "PT5S"}},
  {"id": "done", "name": "Done", "type": "end", "config": {"status": "SUCCEEDED", "output": "{{ steps.call.output }}"}}],
  "workflow_connections": [{"from": "start", "to": "call"}, {"from": "call", "to": "done"}]}' | jq -r .item.workflow_id)
api "$ADMIN_KEY" "$CARDFLOW_URL/v1/workflows/publishWorkflow" -d "{\"workflow_id\": \"$wf\", \"workflow_version\": 1}" >/dev/null
closed=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for url in "http://no-such-host.cardflow.invalid/x" "http://127.0.0.1:$closed/x" "$CARDFLOW_URL/metrics"; do
	id=$(api "$EXEC_KEY" "$CARDFLOW_URL/v1/workflows/triggerworkflow/$wf" -d "{\"url\": \"$url\"}" | jq -r .service_execution_id)
	for _ in $(seq 100); do
		ex=$(api "$ADMIN_KEY" "$CARDFLOW_URL/v1/workflows/getWorkflowExecutionById?workflow_id=$wf&workflow_execution_id=$id")
		status=$(jq -r .item.status <<<"$ex")
		[ "$status" = RUNNING ] || break
		sleep 0.1
	done
	echo "$url: $status $(jq -c '.item.workflow_output_payload.error // .item.workflow_output_payload' <<<"$ex" | head -c 200)"
done
