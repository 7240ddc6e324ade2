#!/usr/bin/env bash
# A workflow whose card step expands a card that repeats a whole-object
# binding: a 40 KB trigger body, and $data over 2,000 items inserts the
# 38 KB list of facts each time, a card of about 76 MB for the card step
# to store and deliver. Run it under tools/attacks/peakrss.sh; it prints the
# execution's status and reason, the outbox's size and the data directory's.
set -euo pipefail
: "${CARDFLOW_URL:?run me under tools/attacks/peakrss.sh}"
api() { curl -sS -H "x-api-key: $1" -H 'content-type: application/json' "${@:2}"; }

card='{"type": "AdaptiveCard", "version": "1.5", "body": [
  {"$data": "${items}", "type": "FactSet", "facts": "${$root.facts}"}]}'
card_id=$(api "$ADMIN_KEY" "$CARDFLOW_URL/v1/adaptive-cards/saveCard" \
	-d "$(jq -n --argjson p "$card" '{card_name: "repeat", card_payload: $p}')" | jq -r .item.card_id)
wf=$(jq -n --arg card "$card_id" '{workflow_name: "repeat", workflow_steps: [
  {id: "start", name: "Start", type: "trigger", config: {kind: "REQUEST"}},
  {id: "ask", name: "Ask", type: "card", config: {card_id: $card, card_version: 1, timeout: "PT1H",
    data: {items: "{{ input.items }}", facts: "{{ input.facts }}"}}},
  {id: "done", name: "Done", type: "end", config: {status: "SUCCEEDED"}}],
  workflow_connections: [{from: "start", to: "ask"}, {from: "ask", to: "done"}]}')
wf_id=$(api "$ADMIN_KEY" "$CARDFLOW_URL/v1/workflows/saveWorkflow" -d "$wf" | jq -r .item.workflow_id)
api "$ADMIN_KEY" "$CARDFLOW_URL/v1/workflows/publishWorkflow" -d "{\"workflow_id\": \"$wf_id\", \"workflow_version\": 1}" >/dev/null

body=$(jq -cn '{items: [range(2000)], facts: [range(100) | {title: "t\(.)", value: ("v" * 370)}]}')
echo "trigger body: $((${#body} / 1024)) KB"
exec_id=$(api "$EXEC_KEY" "$CARDFLOW_URL/v1/workflows/triggerworkflow/$wf_id" -d "$body" | jq -r .service_execution_id)
for _ in $(seq 100); do
	ex=$(api "$ADMIN_KEY" "$CARDFLOW_URL/v1/workflows/getWorkflowExecutionById?workflow_id=$wf_id&workflow_execution_id=$exec_id")
	status=$(jq -r .item.status <<<"$ex")
	[ "$status" = WAITING ] || [ "$status" = FAILED ] || [ "$status" = SUCCEEDED ] && break
	sleep 0.2
done
echo "execution: $status $(jq -c '.item.workflow_output_payload // {}' <<<"$ex" | head -c 300)"
# The card is delivered to the outbox just after the execution waits.
out=$(mktemp)
for _ in $(seq "$([ "$status" = WAITING ] && echo 20 || echo 1)"); do
	size=$(api "$ADMIN_KEY" "$CARDFLOW_URL/v1/adaptive-cards/outbox?limit=1" -o "$out" -w '%{http_code}, %{size_download} bytes')
	head -c 100 "$out" | grep -q '"count":0' || break
	sleep 0.5
done
echo "outbox answer: $size"
rm -f "$out"
# What the store holds, the trigger body included.
echo "data directory: $(du -sk "$CARDFLOW_DATA_DIR" | cut -f1) KB"
