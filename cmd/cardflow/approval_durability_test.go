package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
)

// TestApprovalAnswersSurviveKill kills a serving process (SIGKILL) while
// approvers answer through the API: every answer acknowledged before the
// kill is in its approval after the restart, and the approvals then decide
// and their executions end as the sample two-approver workflow says.
func TestApprovalAnswersSurviveKill(t *testing.T) {
	testenv.Short(t, "real processes to kill")
	const n = 40
	bin := binary(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	port := freePort(t)
	srv := startServer(t, bin, dataDir, port)
	env, err := os.ReadFile(filepath.Join(dataDir, "demo.env"))
	if err != nil {
		t.Fatal(err)
	}
	var key, wf string
	for _, line := range strings.Split(string(env), "\n") {
		if v, ok := strings.CutPrefix(line, "KEY="); ok {
			key = v
		}
		if v, ok := strings.CutPrefix(line, "TWO_APPROVER_WORKFLOW_ID="); ok {
			wf = v
		}
	}
	if key == "" || wf == "" {
		t.Fatalf("demo.env has no KEY or TWO_APPROVER_WORKFLOW_ID:\n%s", env)
	}
	keyOf := func(person string) string {
		out, err := exec.Command(bin, "keys", "create", "--data-dir", dataDir, "--org", "demo-org", "--workspace", "demo-workspace",
			"--scopes", "read,execute", "--actor", person).Output()
		if err != nil {
			t.Fatalf("keys create --actor %s: %v", person, err)
		}
		return strings.TrimSpace(string(out))
	}
	ann, dan := keyOf("ann@example.com"), keyOf("dan@example.com")

	approvals := make([]string, n)
	for i := range n {
		status, out := api(t, "POST", fmt.Sprintf("%s/v1/workflows/triggerworkflow/%s?process_id=A-%d", srv.base, wf, i), key,
			map[string]any{"requester": "bob@example.com", "item": "Chair", "amount": 100 + i})
		if status != 200 {
			t.Fatalf("trigger %d: %d %v", i, status, out)
		}
		approvals[i] = out["service_execution_id"].(string) + "-0001"
	}
	for i, id := range approvals {
		testenv.WaitFor(t, fmt.Sprintf("approval %d to open", i), func() bool {
			status, _ := api(t, "GET", srv.base+"/v1/approvals/getApprovalById?approval_id="+id, key, nil)
			return status == 200
		})
	}

	// ann answers every approval from four clients; the server is killed
	// once half of her answers are acknowledged.
	var mu sync.Mutex
	acked := map[string]bool{}
	var wg sync.WaitGroup
	next := make(chan string, n)
	for _, id := range approvals {
		next <- id
	}
	close(next)
	half := make(chan struct{})
	var once sync.Once
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range next {
				status, _, err := request("POST", srv.base+"/v1/approvals/answerApproval", ann, map[string]any{"approval_id": id, "decision": "approve"})
				if err != nil || status != 200 {
					continue // the kill came first: unknown
				}
				mu.Lock()
				acked[id] = true
				if len(acked) >= n/2 {
					once.Do(func() { close(half) })
				}
				mu.Unlock()
			}
		}()
	}
	<-half
	srv.cmd.Process.Kill()
	srv.cmd.Wait()
	wg.Wait()

	srv = startServer(t, bin, dataDir, port)
	for i, id := range approvals {
		_, out := api(t, "GET", srv.base+"/v1/approvals/getApprovalById?approval_id="+id, key, nil)
		item, _ := out["item"].(map[string]any)
		answers, _ := item["answers"].([]any)
		mu.Lock()
		wasAcked := acked[id]
		mu.Unlock()
		if wasAcked && len(answers) != 1 {
			t.Errorf("approval %d: ann's acknowledged answer is lost: got answers %v", i, answers)
		}
		if len(answers) == 0 {
			// Not acknowledged and not stored: ann answers again.
			if status, out := api(t, "POST", srv.base+"/v1/approvals/answerApproval", ann, map[string]any{"approval_id": id, "decision": "approve"}); status != 200 {
				t.Fatalf("approval %d: ann again: %d %v", i, status, out)
			}
		}
		if status, out := api(t, "POST", srv.base+"/v1/approvals/answerApproval", dan, map[string]any{"approval_id": id, "decision": "approve"}); status != 200 {
			t.Fatalf("approval %d: dan: %d %v", i, status, out)
		}
	}
	for i, id := range approvals {
		ex := strings.TrimSuffix(id, "-0001")
		testenv.WaitFor(t, fmt.Sprintf("execution %d to succeed", i), func() bool {
			_, out := api(t, "GET", srv.base+"/v1/workflows/getWorkflowExecutionById?workflow_id="+wf+"&workflow_execution_id="+ex, key, nil)
			item, _ := out["item"].(map[string]any)
			if item["status"] != "SUCCEEDED" && item["status"] != "RUNNING" && item["status"] != "WAITING" {
				t.Fatalf("execution %d: got %v in %v, want SUCCEEDED", i, item["status"], item["workflow_current_state"])
			}
			return item["status"] == "SUCCEEDED"
		})
	}
	srv.stop(t)
}
