#!/usr/bin/env bash
# Organization `attack` aims its workflow at organization `bystander`'s
# Teams conversation, run under tools/attacks/peakrss.sh:
#
#   tools/attacks/peakrss.sh tools/attacks/teams-conversations.sh
#
# bystander registers its conversation; attack's admin then tries to
# register it, list it, remove it, and save a workflow whose bot delivery
# posts into it. It prints the status each attempt got. The click side
# (a card of attack clicked in bystander's conversation) needs a Bot
# Framework token, which only pkg/httpapi's fake Bot Connector signs:
# TestTeamsCrossOrganizationClick.
set -euo pipefail
: "${CARDFLOW_URL:?run me under tools/attacks/peakrss.sh}"
conv='19:bystander-team@thread.tacv2'
api() { curl -s -o /dev/null -w '%{http_code}' -H "x-api-key: $1" -H 'Content-Type: application/json' -X "$2" "$CARDFLOW_URL$3" ${4:+-d "$4"}; }
echo "bystander registers its conversation: $(api "$OTHER_KEY" POST /v1/teams/registerConversation "{\"conversation_id\": \"$conv\"}")"
echo "attack registers it:                  $(api "$ADMIN_KEY" POST /v1/teams/registerConversation "{\"conversation_id\": \"$conv\"}")"
echo "attack removes it:                    $(api "$ADMIN_KEY" POST /v1/teams/removeConversation "{\"conversation_id\": \"$conv\"}")"
listed=$(curl -s -H "x-api-key: $ADMIN_KEY" "$CARDFLOW_URL/v1/teams/listConversations" | jq -r '.count')
echo "attack lists its conversations:       $listed"
card=$(curl -s -H "x-api-key: $ADMIN_KEY" -H 'Content-Type: application/json' -X POST "$CARDFLOW_URL/v1/adaptive-cards/saveCard" \
	-d '{"card_name": "Purchase", "card_payload": {"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "TextBlock", "text": "Approve?"}]}}' | jq -r .item.card_id)
api "$ADMIN_KEY" POST /v1/adaptive-cards/publishCard "{\"card_id\": \"$card\", \"card_version\": 1}" >/dev/null
wf=$(jq -n --arg card "$card" --arg conv "$conv" '{
	workflow_name: "Purchase approval",
	workflow_integrations: {teams: {type: "bot", service_url: "https://smba.trafficmanager.net/emea/", conversation_id: $conv}},
	workflow_steps: [
		{id: "start", name: "Requested", type: "trigger", config: {kind: "REQUEST"}},
		{id: "ask", name: "Approve", type: "card", config: {card_id: $card}},
		{id: "done", name: "Done", type: "end", config: {status: "SUCCEEDED"}}],
	workflow_connections: [{from: "start", to: "ask"}, {from: "ask", to: "done"}]}')
echo "attack saves a workflow posting there: $(api "$ADMIN_KEY" POST /v1/workflows/saveWorkflow "$wf")"
