#!/usr/bin/env bash
# Many previewCard requests at once (N, default 32) with a read-only key,
# of a card whose binding builds a 200 KB string a thousand times in a
# loop: each string is under the 1 MiB a string may hold, so each request
# spends the expansion's whole budget of what functions build before it
# is refused; BIG sets the string's size (default 200000). Run it under
# tools/attacks/peakrss.sh.
set -euo pipefail
: "${CARDFLOW_URL:?run me under tools/attacks/peakrss.sh}"
api() { curl -sS -H "x-api-key: $1" -H 'content-type: application/json' "${@:2}"; }

card='{"type": "AdaptiveCard", "version": "1.5", "body": [
  {"type": "TextBlock", "text": "${count(foreach($root.items, x, concat($root.big, x)))}"}]}'
card_id=$(api "$ADMIN_KEY" "$CARDFLOW_URL/v1/adaptive-cards/saveCard" \
	-d "$(jq -n --argjson p "$card" '{card_name: "build", card_payload: $p}')" | jq -r .item.card_id)
body=$(mktemp)
trap 'rm -f "$body"' EXIT
jq -cn --arg id "$card_id" --argjson n "${BIG:-200000}" '{card_id: $id, card_version: 1, data: {items: [range(1000)], big: ("b" * $n)}}' >"$body"
echo "$(($(wc -c <"$body") / 1024)) KB request, ${N:-32} at once"
for _ in $(seq "${N:-32}"); do
	api "$READ_KEY" "$CARDFLOW_URL/v1/adaptive-cards/previewCard" -d @"$body" -o /dev/null -w '%{http_code}\n' &
done | sort | uniq -c
wait
