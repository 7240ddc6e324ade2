package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
)

// api sends a request with the key and decodes the JSON answer.
func api(t *testing.T, method, url, key string, body any) (int, map[string]any) {
	t.Helper()
	status, out, err := request(method, url, key, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return status, out
}

// request is api for callers that expect the server may be gone.
func request(method, url, key string, body any) (int, map[string]any, error) {
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(method, url, bytes.NewReader(raw))
	req.Header.Set("x-api-key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, nil
}

// TestSurvivesKill kills a serving process (SIGKILL) with executions in
// every state and checks that a restarted process finishes all of them,
// without running a recorded step again.
func TestSurvivesKill(t *testing.T) {
	testenv.Short(t, "real processes to kill")
	const n = 200
	// The http step calls this server; it counts the calls per execution.
	var mu sync.Mutex
	calls := map[string]int{}
	counter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[strings.TrimPrefix(r.URL.Path, "/count/")]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok": true}`))
	}))
	defer counter.Close()

	bin := binary(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	port := freePort(t)
	// The counter listens on loopback, which outbound calls may reach
	// only when the deployment allows it.
	t.Setenv("CARDFLOW_OUTBOUND_ALLOW", "127.0.0.1")
	srv := startServer(t, bin, dataDir, port)
	keyBytes, err := os.ReadFile(filepath.Join(dataDir, "demo-key"))
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(keyBytes))

	step := func(id, typ string, cfg map[string]any) map[string]any {
		return map[string]any{"id": id, "name": "Step " + id, "type": typ, "config": cfg}
	}
	status, out := api(t, "POST", srv.base+"/v1/workflows/saveWorkflow", key, map[string]any{
		"workflow_name": "durability",
		"workflow_steps": []any{
			step("start", "trigger", map[string]any{"kind": "REQUEST"}),
			step("a", "transform", map[string]any{"output": "{{ input.i * 2.0 }}"}),
			step("call", "http", map[string]any{"method": "POST", "url": counter.URL + "/count/{{ execution.id }}"}),
			step("nap", "delay", map[string]any{"duration": "PT1S"}),
			step("answer", "wait", map[string]any{}),
			step("b", "transform", map[string]any{"output": "{{ steps.a.output + 1.0 }}"}),
			step("done", "end", map[string]any{"status": "SUCCEEDED", "output": "{{ steps.b.output }}"}),
		},
		"workflow_connections": []any{
			map[string]any{"from": "start", "to": "a"}, map[string]any{"from": "a", "to": "call"},
			map[string]any{"from": "call", "to": "nap"}, map[string]any{"from": "nap", "to": "answer"},
			map[string]any{"from": "answer", "to": "b"}, map[string]any{"from": "b", "to": "done"},
		},
	})
	if status != 200 {
		t.Fatalf("saveWorkflow: %d %v", status, out)
	}
	wf := out["item"].(map[string]any)["workflow_id"].(string)
	api(t, "POST", srv.base+"/v1/workflows/publishWorkflow", key, map[string]any{"workflow_id": wf, "workflow_version": 1})

	trigger := func(base string, i int) string {
		status, out := api(t, "POST", fmt.Sprintf("%s/v1/workflows/triggerworkflow/%s?process_id=P-%d", base, wf, i), key, map[string]any{"i": i})
		if status != 200 {
			t.Fatalf("trigger %d: %d %v", i, status, out)
		}
		return out["service_execution_id"].(string)
	}
	execStatus := func(base, id string) string {
		_, out := api(t, "GET", base+"/v1/workflows/getWorkflowExecutionById?workflow_id="+wf+"&workflow_execution_id="+id, key, nil)
		item, _ := out["item"].(map[string]any)
		s, _ := item["status"].(string)
		return s
	}
	ids := make([]string, n)
	// The first half reaches its wait before the kill; the second half is
	// killed while running or sleeping.
	for i := range n / 2 {
		ids[i] = trigger(srv.base, i)
	}
	for i := 0; i < n/2; i++ {
		testenv.WaitFor(t, fmt.Sprintf("execution %d to reach its wait", i), func() bool { return execStatus(srv.base, ids[i]) == "WAITING" })
	}
	for i := n / 2; i < n; i++ {
		ids[i] = trigger(srv.base, i)
	}
	srv.cmd.Process.Kill()
	srv.cmd.Wait()

	srv = startServer(t, bin, dataDir, port)
	for i := range n {
		// Answers for executions not yet at their wait are kept for it.
		if status, out := api(t, "POST", fmt.Sprintf("%s/v1/workflows/resumeworkflow/P-%d", srv.base, i), key, map[string]any{"source": "SAP"}); status != 200 {
			t.Fatalf("resume %d: %d %v", i, status, out)
		}
	}
	for i, id := range ids {
		testenv.WaitFor(t, fmt.Sprintf("execution %d to succeed", i), func() bool {
			_, out := api(t, "GET", srv.base+"/v1/workflows/getWorkflowExecutionById?workflow_id="+wf+"&workflow_execution_id="+id, key, nil)
			item := out["item"].(map[string]any)
			if item["status"] == "SUCCEEDED" {
				// The end step's output, a number, is kept under "value".
				if got, want := item["workflow_output_payload"].(map[string]any)["value"], float64(2*i+1); got != want {
					t.Errorf("execution %d: got output %v, want %v", i, got, want)
				}
				finished := map[string]int{}
				for _, ev := range item["workflow_event_log"].(map[string]any)["events"].([]any) {
					e := ev.(map[string]any)
					if e["type"] == "StepFinished" {
						finished[e["step_id"].(string)]++
					}
				}
				for _, s := range []string{"start", "a", "call", "nap", "answer", "b", "done"} {
					if finished[s] != 1 {
						t.Errorf("execution %d: step %s finished %d times, want once", i, s, finished[s])
					}
				}
				return true
			}
			if item["status"] != "RUNNING" && item["status"] != "WAITING" {
				t.Fatalf("execution %d: got %v in %v, want SUCCEEDED", i, item["status"], item["workflow_current_state"])
			}
			return false
		})
	}
	// A call in flight at the kill may be repeated (its finish was not
	// recorded); no call is lost.
	mu.Lock()
	defer mu.Unlock()
	for i, id := range ids {
		if c := calls[id]; c < 1 || c > 2 {
			t.Errorf("execution %d: the http step was called %d times, want 1 (2 if the kill hit the call)", i, c)
		}
	}
	srv.stop(t)
}
