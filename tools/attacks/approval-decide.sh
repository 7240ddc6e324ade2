#!/usr/bin/env bash
# Attacks on who decides an approval, run under tools/attacks/peakrss.sh:
#
#   tools/attacks/peakrss.sh tools/attacks/approval-decide.sh
#
# An approval step asks ann and cy (policy all). dan's execute key (no
# approver) resumes the waiting execution through resumeworkflow, then
# answers the approval 210 times, 8 at a time; ann approves; an admin
# overrides cy's part.
# It prints what each attempt got and what the records then hold.
set -euo pipefail
api() { curl -s -H "x-api-key: $1" -H 'Content-Type: application/json' -X "$2" "$CARDFLOW_URL$3" ${4:+-d "$4"}; }
card=$(api "$ADMIN_KEY" POST /v1/adaptive-cards/saveCard \
	'{"card_name": "Purchase", "card_payload": {"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "TextBlock", "text": "Approve ${amount}?"}]}}' | jq -r .item.card_id)
api "$ADMIN_KEY" POST /v1/adaptive-cards/publishCard "{\"card_id\": \"$card\", \"card_version\": 1}" >/dev/null
wf=$(api "$ADMIN_KEY" POST /v1/workflows/saveWorkflow "$(jq -n --arg card "$card" '{
	workflow_name: "Purchase approval",
	workflow_steps: [
		{id: "start", name: "Requested", type: "trigger", config: {kind: "REQUEST"}},
		{id: "approve", name: "Two approvals", type: "approval", config: {card_id: $card, data: {amount: "{{ input.amount }}"},
			approvers: ["ann@example.com", "cy@example.com"], policy: "all", timeout: "PT72H"}},
		{id: "done", name: "Approved", type: "end", config: {status: "SUCCEEDED", output: "{{ steps.approve.output }}"}},
		{id: "no", name: "Rejected", type: "end", config: {status: "FAILED", output: "{{ steps.approve.output }}"}}],
	workflow_connections: [{from: "start", to: "approve"}, {from: "approve", to: "done"},
		{from: "approve", to: "no", on: "rejected"}, {from: "approve", to: "no", on: "timeout"}]}')" | jq -r .item.workflow_id)
api "$ADMIN_KEY" POST /v1/workflows/publishWorkflow "{\"workflow_id\": \"$wf\", \"workflow_version\": 1}" >/dev/null
ex=$(api "$ADMIN_KEY" POST "/v1/workflows/triggerworkflow/$wf/1?process_id=PO-1" '{"amount": 5000}' | jq -r .service_execution_id)
id=$ex-0001
for _ in $(seq 100); do
	[ "$(api "$ADMIN_KEY" GET "/v1/approvals/getApprovalById?approval_id=$id" | jq -r '.item.status // empty')" = PENDING ] && break
	sleep 0.1
done
get() { api "$ADMIN_KEY" GET "/v1/workflows/getWorkflowExecutionById?workflow_id=$wf&workflow_execution_id=$ex"; }

echo "resumeworkflow, execute key:  $(api "$EXEC_KEY" POST /v1/workflows/resumeworkflow/PO-1 '{"note": "urgent"}' | jq -c '{code, message}')"
echo "resumeworkflow, admin key:    $(api "$ADMIN_KEY" POST /v1/workflows/resumeworkflow/PO-1 '{"source": "TEAMS", "decision": "approve"}' | jq -r .code)"
echo "execution, approval:          $(get | jq -r .item.status), $(api "$ADMIN_KEY" GET "/v1/approvals/getApprovalById?approval_id=$id" | jq -r .item.status)"

start=$(date +%s.%N)
export -f api
export id
codes=$(seq 210 | xargs -P 8 -I{} bash -c 'api "$EXEC_KEY" POST /v1/approvals/answerApproval "{\"approval_id\": \"$id\", \"decision\": \"approve\"}" | jq -r .code' | sort | uniq -c | tr -s ' \n' ' ')
echo "210 answers by dan:          $codes"
echo "210 refusals in $(echo "$(date +%s.%N) - $start" | bc) s; log: $(get | jq -c '.item.workflow_event_log | {total, kept: (.events | length), types: [.events[].type]}')"
echo "refusals on the approval:     $(api "$ADMIN_KEY" GET "/v1/approvals/getApprovalById?approval_id=$id" | jq -c .item.refusals)"

ann=$("$(dirname "$0")/../../bin/cardflow" keys create --org attack --workspace main --scopes read,execute --actor ann@example.com 2>/dev/null)
api "$ann" POST /v1/approvals/answerApproval "{\"approval_id\": \"$id\", \"decision\": \"approve\"}" >/dev/null
echo "override, execute key:        $(api "$EXEC_KEY" POST /v1/approvals/overrideApproval "{\"approval_id\": \"$id\", \"decision\": \"approve\", \"reason\": \"x\"}" | jq -r .code)"
echo "override, other organization: $(api "$OTHER_KEY" POST /v1/approvals/overrideApproval "{\"approval_id\": \"$id\", \"decision\": \"approve\", \"reason\": \"x\"}" | jq -r .code)"
echo "override, admin:              $(api "$ADMIN_KEY" POST /v1/approvals/overrideApproval "{\"approval_id\": \"$id\", \"decision\": \"approve\", \"reason\": \"cy is on leave\"}" | jq -r .item.status)"
for _ in $(seq 100); do
	[ "$(get | jq -r .item.status)" = SUCCEEDED ] && break
	sleep 0.1
done
echo "output:                       $(get | jq -c '.item.workflow_output_payload | {outcome, decision, overridden_by, reason, answers: [.answers[].approver]}')"
