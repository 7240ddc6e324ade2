package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
)

// TestPersonsDay runs the commands of a person's day against a real
// cardflow serve: cards and workflows list, show and publish; a trigger
// held to the workflow's workflow_schema; approvals list, show and answer
// as the key's person.
func TestPersonsDay(t *testing.T) {
	bin := binary(t)
	dataDir := t.TempDir()
	srv := startServer(t, bin, dataDir, freePort(t))
	keyOf := func(args ...string) string {
		t.Helper()
		out, err := cli(t, bin, dataDir, append([]string{"keys", "create", "--org", "day-org", "--workspace", "ws"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	admin, ann := keyOf("--scopes", "read,execute,admin"), keyOf("--scopes", "read,execute", "--actor", "ann@example.com")
	run := func(key string, args ...string) (string, error) {
		t.Helper()
		return cli(t, bin, dataDir, append(args, "--url", srv.base, "--key", key)...)
	}
	schema := `workflow_schema:
  type: object
  required: [amount]
  properties:
    amount: {type: number, minimum: 1}
`
	file := filepath.Join(t.TempDir(), "expense.yaml")
	if err := os.WriteFile(file, []byte(applyCard+"---\n"+applyWorkflow+schema), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := run(admin, "apply", "-f", file)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Card "Expense card": created \(([0-9A-Z]{26}) version 1\)\nWorkflow "Expense approval": created \(([0-9A-Z]{26}) version 1\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("apply: got %q", out)
	}
	cardID, workflowID := m[1], m[2]

	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"cards", "list"}, []string{"CARD", cardID, "Expense card", "DRAFT"}},
		{[]string{"workflows", "list"}, []string{"WORKFLOW", workflowID, "Expense approval", "DRAFT"}},
		{[]string{"cards", "show", cardID}, []string{"# version 1, DRAFT", "kind: Card", "name: Expense card", "id: " + cardID, "card_payload:"}},
		{[]string{"workflows", "show", workflowID, "--version", "1"}, []string{"kind: Workflow", "id: " + workflowID, "card_id: " + cardID, "minimum: 1"}},
		{[]string{"cards", "publish", cardID, "1"}, []string{"Card " + cardID + " version 1: ACTIVE"}},
		{[]string{"workflows", "publish", workflowID, "1"}, []string{"Workflow " + workflowID + " version 1: ACTIVE"}},
		{[]string{"workflows", "list"}, []string{workflowID, "ACTIVE"}},
	} {
		out, err := run(admin, tt.args...)
		if err != nil {
			t.Errorf("%s: %v", strings.Join(tt.args, " "), err)
			continue
		}
		for _, want := range tt.want {
			if !strings.Contains(out, want) {
				t.Errorf("%s: got %q, want %q", strings.Join(tt.args, " "), out, want)
			}
		}
	}

	// The workflow_schema holds every trigger: the CLI and the API.
	if out, err := run(admin, "trigger", workflowID, "--data", `{"amount": 0}`); err == nil || !strings.Contains(err.Error(), "/amount breaks minimum") {
		t.Errorf("trigger with amount 0: got %q, %v; want the pointer and the rule", out, err)
	}
	req, _ := http.NewRequest("POST", srv.base+"/v1/workflows/triggerworkflow/"+workflowID, strings.NewReader(`{"item": "chair"}`))
	req.Header.Set("x-api-key", admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.StatusCode, http.StatusBadRequest; got != want {
		t.Errorf("API trigger without amount: got %d, want %d", got, want)
	}
	if out, _ := run(admin, "executions", "--workflow", workflowID); strings.Count(out, "\n") != 1 {
		t.Errorf("executions after refused triggers: got %q, want none", out)
	}
	// A workflow_schema that is no JSON Schema is refused when it is saved.
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(broken, []byte(applyCard+"---\n"+applyWorkflow+"workflow_schema: {type: 12}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := run(admin, "apply", "-f", broken); err == nil || !strings.Contains(err.Error(), "workflow_schema is not a valid JSON Schema") {
		t.Errorf("apply of a broken workflow_schema: got %v, want it refused", err)
	}

	if _, err := run(admin, "trigger", workflowID, "--data", `{"amount": 12}`); err != nil {
		t.Fatal(err)
	}
	var approvalID string
	testenv.WaitFor(t, "the approval waiting on ann in approvals list", func() bool {
		out, err := run(ann, "approvals", "list")
		if err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(`(?m)^(\S+)\s+Ask\s+first\s+ann@example.com\s+0`).FindStringSubmatch(out); m != nil {
			approvalID = m[1]
		}
		return approvalID != ""
	})
	out, err = run(ann, "approvals", "show", approvalID)
	if err != nil || !strings.Contains(out, "status        PENDING") {
		t.Errorf("approvals show: got %q, %v; want it PENDING", out, err)
	}
	if _, err := run(ann, "approvals", "answer", approvalID, "--decision", "maybe"); err == nil || !strings.Contains(err.Error(), "--decision must be approve or reject") {
		t.Errorf("answer maybe: got %v, want a usage error", err)
	}
	out, err = run(ann, "approvals", "answer", approvalID, "--decision", "approve", "--comment", "fine")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"status        APPROVED", "ann@example.com approve via api fine"} {
		if !strings.Contains(out, want) {
			t.Errorf("approvals answer: got %q, want %q", out, want)
		}
	}
	if out, err := run(ann, "approvals", "list"); err != nil || strings.Contains(out, approvalID) {
		t.Errorf("approvals list after the answer: got %q, %v; want it gone", out, err)
	}
}
