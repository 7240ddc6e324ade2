package main

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestUsage runs the command in process as a person would try it: help for
// cardflow and for every command, the version, and commands used wrongly.
func TestUsage(t *testing.T) {
	t.Setenv("CARDFLOW_API_KEY", "")
	dataDir := filepath.Join(t.TempDir(), "data")
	tests := []struct {
		args       []string
		status     int
		wantStdout []string
		wantStderr []string
	}{
		{[]string{"--help"}, 0, []string{"usage: cardflow COMMAND", "serve", "trigger", "CARDFLOW_DATA_DIR"}, nil},
		{[]string{"-h"}, 0, []string{"usage: cardflow COMMAND"}, nil},
		{[]string{"help"}, 0, []string{"usage: cardflow COMMAND"}, nil},
		{[]string{"--version"}, 0, []string{"cardflow "}, nil},
		{[]string{"version"}, 0, []string{"cardflow "}, nil},
		{[]string{"help", "trigger"}, 0, []string{"usage: cardflow trigger WORKFLOW_ID [flags]", "--process-id string"}, nil},
		{[]string{"serve", "--help"}, 0, []string{"usage: cardflow serve [flags]", "127.0.0.1", "--addr string", "(default 127.0.0.1:"}, nil},
		{[]string{"keys", "--help"}, 0, []string{"usage: cardflow keys SUBCOMMAND", "create", "list", "revoke"}, nil},
		{[]string{"keys", "create", "--help"}, 0, []string{"usage: cardflow keys create [flags]", "--org string", "--scopes string", "(default read)"}, nil},
		{[]string{"keys", "list", "-h"}, 0, []string{"usage: cardflow keys list [flags]", "--org string"}, nil},
		{[]string{"keys", "revoke", "--help"}, 0, []string{"usage: cardflow keys revoke KEY_ID [flags]", "--data-dir string"}, nil},
		{[]string{"tables", "--help"}, 0, []string{"usage: cardflow tables SUBCOMMAND", "create"}, nil},
		{[]string{"tables", "create", "--help"}, 0, []string{"usage: cardflow tables create [flags]", "--endpoint string"}, nil},
		{[]string{"trigger", "--help"}, 0, []string{"usage: cardflow trigger WORKFLOW_ID [flags]", "--data string", "--version int", "--url string"}, nil},
		{[]string{"resume", "--help"}, 0, []string{"usage: cardflow resume PROCESS_ID [flags]", "--data string"}, nil},
		{[]string{"executions", "--help"}, 0, []string{"usage: cardflow executions [flags]", "--workflow string", "--limit int"}, nil},
		{[]string{"watch", "--help"}, 0, []string{"usage: cardflow watch WORKFLOW_ID EXECUTION_ID [flags]", "waitForExecution"}, nil},
		{[]string{"redrive", "--help"}, 0, []string{"usage: cardflow redrive WORKFLOW_ID EXECUTION_ID [flags]", "FAILED or TIMED_OUT"}, nil},
		{[]string{"outbox", "--help"}, 0, []string{"usage: cardflow outbox [flags]", "--limit int"}, nil},
		{[]string{"links", "--help"}, 0, []string{"usage: cardflow links APPROVAL_ID --approver PERSON [flags]", "--approver string", "admin key"}, nil},
		{[]string{"override", "--help"}, 0, []string{"usage: cardflow override APPROVAL_ID --decision approve|reject --reason TEXT [flags]", "--reason string", "admin key"}, nil},
		{[]string{"help", "override"}, 0, []string{"usage: cardflow override APPROVAL_ID"}, nil},
		{[]string{"apply", "--help"}, 0, []string{"usage: cardflow apply [flags]", "-f value", "--publish", "--dry-run", "file, line and JSON pointer"}, nil},
		{[]string{"export", "--help"}, 0, []string{"usage: cardflow export [flags]", "--dir string"}, nil},
		{[]string{"approvals", "--help"}, 0, []string{"usage: cardflow approvals SUBCOMMAND", "list", "show", "answer"}, nil},
		{[]string{"approvals", "answer", "--help"}, 0, []string{"usage: cardflow approvals answer APPROVAL_ID [flags]", "--decision string", "--comment string"}, nil},
		{[]string{"workflows", "--help"}, 0, []string{"usage: cardflow workflows SUBCOMMAND", "list", "show", "publish"}, nil},
		{[]string{"cards", "publish", "--help"}, 0, []string{"usage: cardflow cards publish CARD_ID VERSION [flags]"}, nil},

		{nil, 2, nil, []string{"usage: cardflow COMMAND", "cardflow: no command given"}},
		{[]string{"bogus"}, 2, nil, []string{`cardflow: unknown command "bogus"`, "cardflow --help"}},
		{[]string{"keys"}, 2, nil, []string{"cardflow: keys needs a subcommand: create, list, revoke"}},
		{[]string{"apply"}, 2, nil, []string{"apply needs -f PATH", "cardflow apply --help"}},
		{[]string{"export"}, 2, nil, []string{"export needs --dir DIR"}},
		{[]string{"approvals", "answer", "01J9Z3K8Q6X2M4T7V5B1N0C8DE-0001", "--decision", "maybe"}, 2, nil, []string{"--decision must be approve or reject"}},
		{[]string{"workflows", "publish", "wf"}, 2, nil, []string{"workflows publish takes WORKFLOW_ID VERSION, got 1 argument(s)"}},
		{[]string{"cards", "publish", "c", "one"}, 2, nil, []string{`VERSION must be a whole number from 1, got "one"`}},
		{[]string{"keys", "drop"}, 2, nil, []string{`unknown keys subcommand "drop"`}},
		{[]string{"keys", "revoke"}, 2, nil, []string{"keys revoke takes KEY_ID, got 0 argument(s)", "cardflow keys revoke --help"}},
		{[]string{"trigger", "wf", "--bogus"}, 2, nil, []string{"-bogus", "cardflow trigger --help"}},
		{[]string{"watch", "wf"}, 2, nil, []string{"watch takes WORKFLOW_ID EXECUTION_ID, got 1 argument(s)"}},
		{[]string{"redrive", "wf"}, 2, nil, []string{"redrive takes WORKFLOW_ID EXECUTION_ID, got 1 argument(s)"}},
		{[]string{"outbox", "extra"}, 2, nil, []string{`outbox takes no arguments, got "extra"`}},
		{[]string{"links", "--approver", "dan@example.com"}, 2, nil, []string{"links takes APPROVAL_ID --approver PERSON, got 0 argument(s)"}},
		{[]string{"links", "01J9Z3K8Q6X2M4T7V5B1N0C8DE-0001", "--data-dir", dataDir, "--key", "x"}, 2, nil, []string{"links needs --approver PERSON"}},
		// Usage errors of override send nothing: --url names no service.
		{[]string{"override", "--decision", "approve", "--reason", "away"}, 2, nil, []string{"override takes APPROVAL_ID --decision approve|reject --reason TEXT, got 0 argument(s)"}},
		{[]string{"override", "EX-0001", "--decision", "approve", "--url", "http://127.0.0.1:1", "--key", "x"}, 2, nil, []string{"override needs --reason TEXT", "cardflow override --help"}},
		{[]string{"override", "EX-0001", "--decision", "approve", "--reason", "  ", "--url", "http://127.0.0.1:1", "--key", "x"}, 2, nil, []string{"override needs --reason TEXT"}},
		{[]string{"override", "EX-0001", "--decision", "approved", "--reason", "away", "--url", "http://127.0.0.1:1", "--key", "x"}, 2, nil, []string{`override needs --decision approve or --decision reject, got "approved"`}},
		{[]string{"override", "EX-0001", "--reason", "away", "--url", "http://127.0.0.1:1", "--key", "x"}, 2, nil, []string{`got ""`}},

		// A service error reads as its message, said once.
		{[]string{"keys", "create", "--org", "acme#2", "--workspace", "finance", "--data-dir", dataDir}, 1, nil, []string{"cardflow: organization and workspace ids"}},
		{[]string{"executions", "--data-dir", dataDir}, 1, nil, []string{"no API key", "CARDFLOW_API_KEY", "--data-dir", "CARDFLOW_DATA_DIR", filepath.Join(dataDir, "demo-key")}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			status := exitStatus(run(t.Context(), tc.args, &stdout, &stderr), &stderr)
			if status != tc.status {
				t.Errorf("exit status: got %d, want %d\nstdout:\n%s\nstderr:\n%s", status, tc.status, &stdout, &stderr)
			}
			for _, want := range tc.wantStdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout: got %q, want %q in it", &stdout, want)
				}
			}
			for _, want := range tc.wantStderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr: got %q, want %q in it", &stderr, want)
				}
			}
			for _, bad := range []string{"cardflow: cardflow:", "VALIDATION_ERROR", `"--help"`} {
				if strings.Contains(stderr.String(), bad) {
					t.Errorf("stderr: got %q, want no %q", &stderr, bad)
				}
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	invalid := cardflow.Errorf(cardflow.EINVALID, "card_name is required")
	tests := []struct {
		err  error
		want string
	}{
		{invalid, "card_name is required"},
		{fmt.Errorf("load demo data: %w", invalid), "load demo data: card_name is required"},
		{errors.New("is the service running? connection refused"), "is the service running? connection refused"},
	}
	for _, tc := range tests {
		if got := describe(tc.err); got != tc.want {
			t.Errorf("describe(%v): got %q, want %q", tc.err, got, tc.want)
		}
	}
}
