#!/bin/bash
# link-replay.sh: bytes a running `cardflow serve` writes for 100 replays of
# a used personal link (RELIABILITY.md, "Replaying a used personal link").
# It serves a fresh data directory on PORT (default 38411), triggers the
# sample's two-approver workflow, has ann and dan approve through their
# links (which the demo key, an admin key, asks for with `cardflow links`),
# then posts ann's confirmation form 100 times more and reads the server's
# /proc/PID/io around the replays.
set -euo pipefail
cd "$(dirname "$0")/../.."
PORT=${PORT:-38411}
BIN=$(mktemp -d)/cardflow
go build -o "$BIN" ./cmd/cardflow
D=$(mktemp -d)
"$BIN" serve --data-dir "$D" --addr "127.0.0.1:$PORT" >"$D/serve.log" 2>&1 &
SP=$!
trap 'kill $SP 2>/dev/null; wait $SP 2>/dev/null; rm -rf "$D" "$(dirname "$BIN")"' EXIT
for _ in $(seq 100); do
	[ -f "$D/demo.env" ] && curl -s -o /dev/null "127.0.0.1:$PORT/" && break
	sleep 0.2
done
. "$D/demo.env"
BASE=http://127.0.0.1:$PORT
export CARDFLOW_URL=$BASE CARDFLOW_DATA_DIR=$D
EX=$(curl -s -X POST "$BASE/v1/workflows/triggerworkflow/$TWO_APPROVER_WORKFLOW_ID" -H "x-api-key: $KEY" \
	-d '{"requester": "bob@example.com", "item": "Server rack", "amount": 12800}' | sed 's/.*"service_execution_id":"\([^"]*\)".*/\1/')
sleep 1
field() { sed -n "s/.*name=\"$1\" value=\"\([^\"]*\)\".*/\1/p" "$2"; }
for who in ann@example.com dan@example.com; do
	curl -s "$("$BIN" links "$EX-0001" --approver "$who" | awk '$1 == "Approve" {print $2}')" >"$D/page-$who"
	curl -s -X POST "$BASE/v1/teams/respond" --data-urlencode "token=$(field token "$D/page-$who")" \
		--data-urlencode "confirmation=$(field confirmation "$D/page-$who")" | grep -o 'Your answer (approve) is recorded[^<]*'
done
sleep 1
curl -s "$BASE/v1/workflows/getWorkflowExecutionById?workflow_id=$TWO_APPROVER_WORKFLOW_ID&workflow_execution_id=$EX" \
	-H "x-api-key: $KEY" | grep -o '"status":"[A-Z]*"' | head -1
io() { awk -v k="$1" '$1 == k":" {print $2}' "/proc/$SP/io"; }
wchar=$(io wchar) disk=$(io write_bytes)
for _ in $(seq 100); do
	curl -s -o /dev/null -X POST "$BASE/v1/teams/respond" --data-urlencode "token=$(field token "$D/page-ann@example.com")" \
		--data-urlencode "confirmation=$(field confirmation "$D/page-ann@example.com")"
done
echo "100 replays: write() $(($(io wchar) - wchar)) bytes (the 100 pages included), to disk $(($(io write_bytes) - disk)) bytes"
