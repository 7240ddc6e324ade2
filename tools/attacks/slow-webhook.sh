#!/usr/bin/env bash
# One organization's webhook receiver holds every delivery for 30 s (past
# the delivery timeout) while that organization keeps triggering
# executions; another organization's receiver answers at once. Run it
# under tools/attacks/peakrss.sh; it prints how long each of five of the
# other organization's executions took from its trigger to its
# ExecutionSucceeded event at that organization's receiver.
set -euo pipefail
: "${CARDFLOW_URL:?run me under tools/attacks/peakrss.sh}"
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/bin/cardflow
api() { curl -sS -H "x-api-key: $1" -H 'content-type: application/json' "${@:2}"; }
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

# The receivers: each writes its port to a file; the fast one appends
# "<arrival seconds> <execution id> <event type>" for each event.
receiver='
import http.server, json, sys, time
slow, out = sys.argv[1] == "slow", sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if slow:
            time.sleep(30)
        else:
            ev = json.loads(body)
            with open(out, "a") as f:
                f.write("%f %s %s\n" % (time.time(), ev.get("workflow_execution_id"), ev["type"]))
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(out + ".port", "w").write(str(s.server_port))
s.serve_forever()
'
python3 -c "$receiver" slow "$work/slow" & pids+=($!)
python3 -c "$receiver" fast "$work/fast" & pids+=($!)
for f in slow fast; do
	for _ in $(seq 50); do [ -s "$work/$f.port" ] && break; sleep 0.1; done
done
"$bin" webhooks add --org attack "http://127.0.0.1:$(cat "$work/slow.port")/" >/dev/null 2>&1
"$bin" webhooks add --org bystander "http://127.0.0.1:$(cat "$work/fast.port")/" >/dev/null 2>&1

publish() {
	local wf
	wf=$(api "$1" "$CARDFLOW_URL/v1/workflows/saveWorkflow" -d '{"workflow_name": "events", "workflow_steps": [
	  {"id": "start", "name": "Start", "type": "trigger", "config": {"kind": "REQUEST"}},
	  {"id": "done", "name": "Done", "type": "end", "config": {"status": "SUCCEEDED"}}],
	  "workflow_connections": [{"from": "start", "to": "done"}]}' | jq -r .item.workflow_id)
	api "$1" "$CARDFLOW_URL/v1/workflows/publishWorkflow" -d "{\"workflow_id\": \"$wf\", \"workflow_version\": 1}" >/dev/null
	echo "$wf"
}
attack_wf=$(publish "$ADMIN_KEY")
other_wf=$(publish "$OTHER_KEY")

# The attacking organization changes an execution every 0.2 s.
(while :; do api "$ADMIN_KEY" "$CARDFLOW_URL/v1/workflows/triggerworkflow/$attack_wf" -d '{}' >/dev/null; sleep 0.2; done) & pids+=($!)
sleep 2
for i in 1 2 3 4 5; do
	start=$(date +%s.%N)
	id=$(api "$OTHER_KEY" "$CARDFLOW_URL/v1/workflows/triggerworkflow/$other_wf" -d '{}' | jq -r .service_execution_id)
	for _ in $(seq 1200); do
		line=$(grep " $id cardflow.execution.succeeded" "$work/fast" 2>/dev/null || true)
		[ -n "$line" ] && break
		sleep 0.05
	done
	[ -n "$line" ] || { echo "execution $i: its event did not arrive within 60 s"; continue; }
	awk -v s="$start" -v i="$i" '{printf "execution %d: event after %.2f s\n", i, $1 - s}' <<<"$line"
	sleep 1
done
