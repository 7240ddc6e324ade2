# Shared by the CEL attacks, which tools/attacks/peakrss.sh runs:
# run_transform OUTPUT BODY_FILE runs a workflow of one transform step whose
# output is OUTPUT over the trigger body BODY_FILE, and prints how the
# execution ended.
# publish_transform OUTPUT saves and publishes that workflow, and prints
# its id.
publish_transform() {
	local output=$1 wf ver
	local H=(-sS -H "content-type: application/json")
	wf=$(jq -n --arg out "$output" '{workflow_name: "cel attack",
		workflow_steps: [
			{id: "start", name: "Start", type: "trigger", config: {kind: "REQUEST"}},
			{id: "build", name: "Build", type: "transform", config: {output: $out}},
			{id: "done", name: "Done", type: "end", config: {status: "SUCCEEDED"}}],
		workflow_connections: [{from: "start", to: "build"}, {from: "build", to: "done"}]}' |
		curl "${H[@]}" -H "x-api-key: $ADMIN_KEY" -d @- "$CARDFLOW_URL/v1/workflows/saveWorkflow")
	ver=$(jq -r .item.workflow_version <<<"$wf")
	wf=$(jq -r .item.workflow_id <<<"$wf")
	[ "$wf" != null ] || { echo "saveWorkflow refused the workflow" >&2; return 1; }
	curl "${H[@]}" -H "x-api-key: $ADMIN_KEY" -o /dev/null -w "publishWorkflow: %{http_code}\n" \
		-d "{\"workflow_id\": \"$wf\", \"workflow_version\": $ver}" "$CARDFLOW_URL/v1/workflows/publishWorkflow" >&2
	echo "$wf"
}

run_transform() {
	local output=$1 body_file=$2 wf ex
	local H=(-sS -H "content-type: application/json")
	wf=$(publish_transform "$output")
	local start=$(date +%s.%N)
	ex=$(curl "${H[@]}" -H "x-api-key: $EXEC_KEY" -d @"$body_file" "$CARDFLOW_URL/v1/workflows/triggerworkflow/$wf" | jq -r .service_execution_id)
	echo "execution $ex"
	if [ -n "${CANCEL_AFTER:-}" ]; then
		sleep "$CANCEL_AFTER"
		curl "${H[@]}" -H "x-api-key: $EXEC_KEY" -d "{\"workflow_id\": \"$wf\", \"workflow_execution_id\": \"$ex\"}" "$CARDFLOW_URL/v1/workflows/cancelExecution" |
			jq -r '"cancelExecution answered \(.item.status // .)"'
	fi
	# Wait for the execution to end, at most a minute.
	local i
	for i in 1 2 3; do
		curl "${H[@]}" --max-time 30 -H "x-api-key: $READ_KEY" \
			"$CARDFLOW_URL/v1/workflows/waitForExecution?workflow_id=$wf&workflow_execution_id=$ex&timeout=20" |
			jq -e '.item.status | test("RUNNING|WAITING")' >/dev/null || break
	done
	curl "${H[@]}" -H "x-api-key: $READ_KEY" "$CARDFLOW_URL/v1/workflows/getWorkflowExecutionById?workflow_id=$wf&workflow_execution_id=$ex" |
		jq -r '"status \(.item.status // .execution_status // .status) after '"$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")"' s: \(.item.workflow_output_payload // .item.output // "" | tostring | .[0:200])"'
	if [ -n "${CANCEL_AFTER:-}" ]; then
		# What the server still burns once the execution is CANCELLED.
		local pid cpu0 cpu1
		pid=$(pgrep -n -f "cardflow serve --addr 127.0.0.1:0" || true)
		if [ -n "$pid" ]; then
			cpu0=$(awk '{print $14+$15}' /proc/$pid/stat); sleep 3; cpu1=$(awk '{print $14+$15}' /proc/$pid/stat)
			echo "server CPU in the 3 s after: $(( (cpu1 - cpu0) * 10 )) ms"
		fi
	fi
}

# nested_binds DEPTH BODY: cel.bind(l1, [input.s, input.s], cel.bind(l2, [l1, l1], ... BODY))
nested_binds() {
	local depth=$1 body=$2 s="" close="" prev="input.s" i
	for i in $(seq 1 "$depth"); do
		s+="cel.bind(l$i, [$prev, $prev], "
		close+=")"
		prev=l$i
	done
	echo "$s$body$close"
}
