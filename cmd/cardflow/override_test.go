package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
)

// TestOverrideCommand runs `cardflow override` and `cardflow executions`
// against `cardflow serve`: an execute key triggers the two-approver
// sample, is refused the override with the service's message, and the
// admin key overrides it; the executions list names who triggered it.
func TestOverrideCommand(t *testing.T) {
	bin := binary(t)
	dataDir := filepath.Join(t.TempDir(), ".cardflow")
	srv := startServer(t, bin, dataDir, freePort(t))
	t.Setenv("CARDFLOW_URL", srv.base)
	t.Setenv("CARDFLOW_API_KEY", "")
	demoEnv, err := os.ReadFile(filepath.Join(dataDir, "demo.env"))
	if err != nil {
		t.Fatal(err)
	}
	var workflow string
	for line := range strings.Lines(string(demoEnv)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "TWO_APPROVER_WORKFLOW_ID="); ok {
			workflow = v
		}
	}
	adminKey, err := os.ReadFile(filepath.Join(dataDir, "demo-key"))
	if err != nil {
		t.Fatal(err)
	}
	admin := strings.TrimSpace(string(adminKey))
	bob, err := cli(t, bin, dataDir, "keys", "create", "--org", "demo-org", "--workspace", "demo-workspace", "--scopes", "read,execute", "--actor", "bob@example.com")
	if err != nil {
		t.Fatal(err)
	}
	bob = strings.TrimSpace(bob)

	ex, err := cli(t, bin, dataDir, "trigger", workflow, "--key", bob, "--data", `{"requester": "bob@example.com", "item": "Server rack", "amount": 12800}`)
	if err != nil {
		t.Fatal(err)
	}
	ex = strings.TrimSpace(ex)
	approval := ex + "-0001"
	// The approval opens as the execution reaches its step; until then
	// overrideApproval answers 404 and changes nothing.
	testenv.WaitFor(t, "the approval to open", func() bool {
		return getStatus(t, srv.base+"/v1/approvals/getApprovalById?approval_id="+approval, admin) == 200
	})

	_, err = cli(t, bin, dataDir, "override", approval, "--decision", "approve", "--reason", "dan is away", "--key", bob)
	if got := errText(err); !strings.Contains(got, "exit status 1") || !strings.Contains(got, "cardflow: ") || !strings.Contains(got, "admin") || !strings.Contains(got, "(403 ") {
		t.Errorf("override with an execute key: got %q, want exit 1 with the service's 403 message naming the admin scope", got)
	}
	out, err := cli(t, bin, dataDir, "override", approval, "--decision", "approve", "--reason", "dan is away", "--key", admin)
	if err != nil {
		t.Fatal(err)
	}
	if want := approval + " OVERRIDDEN (approve) by "; !strings.HasPrefix(out, want) || strings.TrimSpace(strings.TrimPrefix(out, want)) == "" {
		t.Errorf("override with the admin key: got %q, want %q and the admin's actor", out, want)
	}
	_, err = cli(t, bin, dataDir, "override", approval, "--decision", "reject", "--reason", "again", "--key", admin)
	if got := errText(err); !strings.Contains(got, "already overridden") || !strings.Contains(got, "(409 ") {
		t.Errorf("second override: got %q, want the 409 saying it was already overridden", got)
	}

	list, err := cli(t, bin, dataDir, "executions", "--key", admin)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(list, "\n")
	if !strings.Contains(lines[0], " TRIGGERED_BY ") {
		t.Errorf("executions header: got %q, want a TRIGGERED_BY column", lines[0])
	}
	var row string
	for _, l := range lines {
		if strings.HasPrefix(l, ex+" ") {
			row = l
		}
	}
	if !strings.Contains(row, " bob@example.com ") {
		t.Errorf("executions: got %q for %s, want it triggered by bob@example.com\n%s", row, ex, list)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
