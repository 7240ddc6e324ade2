#!/usr/bin/env bash
# previewCard of a card whose $data repeats a whole-object binding: the
# binding `${$root.facts}` inserts a 38 KB list, and two nested $data of
# 100 items repeat it 10,000 times. Once with the admin key (40 KB
# request), once with a read-only key (25 KB request, 64 x 64 repetitions).
# Run it under tools/attacks/peakrss.sh; it prints each answer's status and
# size.
set -euo pipefail
: "${CARDFLOW_URL:?run me under tools/attacks/peakrss.sh}"
api() { curl -sS -H "x-api-key: $1" -H 'content-type: application/json' "${@:2}"; }

card='{"type": "AdaptiveCard", "version": "1.5", "body": [
  {"$data": "${$root.items}", "type": "Container", "items": [
    {"$data": "${$root.items}", "type": "FactSet", "facts": "${$root.facts}"}]}]}'
card_id=$(api "$ADMIN_KEY" "$CARDFLOW_URL/v1/adaptive-cards/saveCard" \
	-d "$(jq -n --argjson p "$card" '{card_name: "repeat", card_payload: $p}')" | jq -r .item.card_id)

# data N M: M facts of a 370-byte value, and N items.
data() {
	jq -cn --argjson n "$1" --argjson m "$2" \
		'{card_id: $ENV.card_id, card_version: 1,
		  data: {items: [range($n)], facts: [range($m) | {title: "t\(.)", value: ("v" * 370)}]}}'
}
export card_id
preview() {
	local who=$1 key=$2 body=$3
	printf '%s key, %d KB request: ' "$who" $((${#body} / 1024))
	api "$key" "$CARDFLOW_URL/v1/adaptive-cards/previewCard" -o /tmp/card-preview-repeat.$$ \
		-w '%{http_code}, %{size_download} bytes answered' -d "$body"
	printf ' %s\n' "$(head -c 200 /tmp/card-preview-repeat.$$ | grep -o '"message":"[^"]*"' || true)"
	rm -f /tmp/card-preview-repeat.$$
}
preview admin "$ADMIN_KEY" "$(data 100 100)"
preview read "$READ_KEY" "$(data 64 64)"
