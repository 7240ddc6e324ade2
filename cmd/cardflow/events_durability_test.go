package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/webhooks"
)

// hook is a webhook receiver that holds every delivery until it opens, and
// then records the verified ones by event id.
type hook struct {
	t      *testing.T
	mu     sync.Mutex
	secret string
	open   chan struct{}
	held   int
	got    map[string]cardflow.Published
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.held++
	h.mu.Unlock()
	select {
	case <-h.open:
	case <-r.Context().Done():
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := webhooks.Verify(h.secret, r.Header, body, time.Now(), 5*time.Minute); err != nil {
		h.t.Errorf("delivery does not verify: %v", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var ev cardflow.Published
	if err := json.Unmarshal(body, &ev); err != nil {
		h.t.Errorf("delivery body %s: %v", body, err)
	}
	h.got[ev.ID] = ev
}

// types returns the event types received per execution, in id order.
func (h *hook) types() map[string][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string][]string{}
	ids := make([]string, 0, len(h.got))
	for id := range h.got {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		ev := h.got[id]
		out[ev.ExecutionID] = append(out[ev.ExecutionID], ev.Type)
	}
	return out
}

// TestEventsSurviveKill kills the server (SIGKILL) after executions changed
// and before any of their events reached the webhook, which holds every
// delivery, and checks that after a restart every event arrives, signed.
func TestEventsSurviveKill(t *testing.T) {
	testenv.Short(t, "real processes to kill")
	const n = 20
	h := &hook{t: t, open: make(chan struct{}), got: map[string]cardflow.Published{}}
	receiver := httptest.NewServer(h)
	defer receiver.Close()
	opened := false
	defer func() {
		if !opened {
			close(h.open)
		}
	}()

	bin := binary(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	port := freePort(t)
	srv := startServer(t, bin, dataDir, port)
	keyBytes, err := os.ReadFile(filepath.Join(dataDir, "demo-key"))
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(keyBytes))
	secret, err := cli(t, bin, dataDir, "webhooks", "add", "--org", "demo-org", receiver.URL+"/events")
	if err != nil {
		t.Fatalf("webhooks add: %v", err)
	}
	h.mu.Lock()
	h.secret = strings.TrimSpace(secret)
	h.mu.Unlock()
	if list, err := cli(t, bin, dataDir, "webhooks", "list"); err != nil || !strings.Contains(list, receiver.URL) || strings.Contains(list, h.secret) {
		t.Fatalf("webhooks list: got %q (%v), want the URL and never the secret", list, err)
	}

	step := func(id, typ string, cfg map[string]any) map[string]any {
		return map[string]any{"id": id, "name": "Step " + id, "type": typ, "config": cfg}
	}
	status, out := api(t, "POST", srv.base+"/v1/workflows/saveWorkflow", key, map[string]any{
		"workflow_name": "events",
		"workflow_steps": []any{
			step("start", "trigger", map[string]any{"kind": "REQUEST"}),
			step("answer", "wait", map[string]any{}),
			step("done", "end", map[string]any{"status": "SUCCEEDED"}),
		},
		"workflow_connections": []any{map[string]any{"from": "start", "to": "answer"}, map[string]any{"from": "answer", "to": "done"}},
	})
	if status != 200 {
		t.Fatalf("saveWorkflow: %d %v", status, out)
	}
	wf := out["item"].(map[string]any)["workflow_id"].(string)
	api(t, "POST", srv.base+"/v1/workflows/publishWorkflow", key, map[string]any{"workflow_id": wf, "workflow_version": 1})

	ids := make([]string, n)
	for i := range n {
		status, out := api(t, "POST", fmt.Sprintf("%s/v1/workflows/triggerworkflow/%s?process_id=E-%d", srv.base, wf, i), key, map[string]any{"i": i})
		if status != 200 {
			t.Fatalf("trigger %d: %d %v", i, status, out)
		}
		ids[i] = out["service_execution_id"].(string)
	}
	for i, id := range ids {
		testenv.WaitFor(t, fmt.Sprintf("execution %d to reach its wait", i), func() bool {
			_, out := api(t, "GET", srv.base+"/v1/workflows/getWorkflowExecutionById?workflow_id="+wf+"&workflow_execution_id="+id, key, nil)
			item, _ := out["item"].(map[string]any)
			return item["status"] == "WAITING"
		})
	}
	// Deliveries are in flight, held by the receiver: none has arrived.
	testenv.WaitFor(t, "a delivery to reach the receiver", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.held > 0
	})
	if got := len(h.types()); got != 0 {
		t.Fatalf("before the kill: %d executions' events arrived, want none", got)
	}
	srv.cmd.Process.Kill()
	srv.cmd.Wait()

	close(h.open)
	opened = true
	srv = startServer(t, bin, dataDir, port)
	for i := range n {
		if status, out := api(t, "POST", fmt.Sprintf("%s/v1/workflows/resumeworkflow/E-%d", srv.base, i), key, map[string]any{"source": "SAP"}); status != 200 {
			t.Fatalf("resume %d: %d %v", i, status, out)
		}
	}
	want := []string{cardflow.EventTypeStarted, cardflow.EventTypeWaiting, cardflow.EventTypeResumed, cardflow.EventTypeSucceeded}
	testenv.WaitFor(t, "every execution's events", func() bool {
		got := h.types()
		for _, id := range ids {
			if strings.Join(got[id], " ") != strings.Join(want, " ") {
				return false
			}
		}
		return true
	})
	h.mu.Lock()
	for _, ev := range h.got {
		if ev.WorkflowID == wf && (ev.OrganizationID != "demo-org" || ev.WorkflowVersion != 1 || ev.Time == 0 || ev.Status == "") {
			t.Errorf("got event %+v, want it of demo-org, workflow version 1, with a time and a status", ev)
		}
	}
	h.mu.Unlock()
	srv.stop(t)
	if strings.Contains(srv.stderr(t), h.secret) {
		t.Error("the server's log holds the webhook's secret")
	}
}
