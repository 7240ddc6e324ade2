package main

import (
	"bufio"
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/sample"
)

// TestWatch follows a waiting execution with `cardflow watch` and answers
// it once watch has shown the wait: watch shows the steps after the
// answer and ends with the final status.
func TestWatch(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(store, store, localmode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	svc := st.Service
	ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: "org-1", WorkspaceID: "ws-1", Scopes: cardflow.AllScopes, Actor: "test"})
	ids, err := sample.Load(ctx, svc)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := svc.CreateKey(ctx, app.CreateKeyInput{OrganizationID: "org-1", WorkspaceID: "ws-1", Scopes: []string{cardflow.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(svc, httpapi.KeyAuthenticator{Service: svc})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	started, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: ids.ApprovalWorkflowID, Version: 2, ProcessID: "PO-9",
		Body: []byte(`{"requester": "Ann", "item": "Dock", "amount": 1200}`)})
	if err != nil {
		t.Fatal(err)
	}

	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := watch(context.Background(), []string{ids.ApprovalWorkflowID, started.ExecutionID, "--url", srv.URL, "--key", key}, pw, io.Discard)
		pw.Close()
		done <- err
	}()
	lines := bufio.NewScanner(pr)
	var out strings.Builder
	for lines.Scan() {
		out.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "Waiting") {
			break
		}
	}
	if _, err := svc.Resume(ctx, "PO-9", []byte(`{"source": "TEAMS", "decision": "approve"}`)); err != nil {
		t.Fatal(err)
	}
	var last string
	for lines.Scan() {
		last = lines.Text()
		out.WriteString(last + "\n")
	}
	if err := <-done; err != nil {
		t.Fatalf("watch: %v\n%s", err, out.String())
	}
	for _, want := range []string{"ExecutionStarted", "Waiting  Manager approval", "Resumed  Manager approval", "ExecutionSucceeded"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("watch printed no %q:\n%s", want, out.String())
		}
	}
	if last != "SUCCEEDED" {
		t.Errorf("last line: got %q, want SUCCEEDED\n%s", last, out.String())
	}
	if got := strings.Count(out.String(), "Waiting  Manager approval"); got != 1 {
		t.Errorf("the wait is shown %d times, want once:\n%s", got, out.String())
	}
}
