package dynamostore_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
	"github.com/cardflow/cardflow/pkg/localmode"
)

// TestHousekeepingSkipsUnreadableItems puts raw items that do not decode,
// a process record and an execution, both due for housekeeping in one
// organization, into tables of their own. Housekeeping logs them by their
// ids, skips them, and does its work for another organization all the
// same.
func TestHousekeepingSkipsUnreadableItems(t *testing.T) {
	_, prefix := dynamostoretest.Tables(t)
	client, err := dynamoclient.New(t.Context(), endpoint(t), "")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	store, err := dynamostore.New(client, dynamostore.WithTablePrefix(prefix), dynamostore.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	// start stores a finished execution with a process record as change
	// makes it.
	start := func(org, pid string, change func(p *cardflow.Process)) *cardflow.Execution {
		t.Helper()
		ex := &cardflow.Execution{WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: "wf-1", WorkflowVersion: 1,
			OrganizationID: org, Status: cardflow.ExecSucceeded, CreatedOn: 1000, State: cardflow.ExecutionState{ProcessID: pid}}
		p := &cardflow.Process{OrganizationID: org, ProcessID: pid, WorkflowID: "wf-1", ExecutionID: ex.WorkflowExecutionID}
		var idem *cardflow.Idempotency
		if pid == "PO-keyed" {
			idem = &cardflow.Idempotency{OrganizationID: org, Key: "order-1", RequestHash: "h", WorkflowID: "wf-1", ExecutionID: ex.WorkflowExecutionID, ExpiresAt: 2}
		}
		if err := store.StartExecution(t.Context(), ex, p, idem); err != nil {
			t.Fatal(err)
		}
		change(p)
		if err := store.PutProcess(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		return ex
	}
	overdue := func(p *cardflow.Process) {
		p.Waits, p.Wait = 1, &cardflow.Wait{Seq: 1, StepID: "approve", OpenedOn: 1, Deadline: 1000}
	}
	badExecution := start("acme", "PO-bad-execution", overdue)
	start("globex", "PO-done", overdue)
	start("globex", "PO-early", func(p *cardflow.Process) {
		p.Early = &cardflow.Resume{Source: cardflow.SourceSAP, Payload: map[string]any{"ok": true}, Actor: "sap", ReceivedOn: 1000}
	})
	start("globex", "PO-expired", func(p *cardflow.Process) { p.Closed, p.ExpiresAt = true, 2 })
	start("globex", "PO-keyed", func(p *cardflow.Process) { p.Closed, p.ExpiresAt = true, time.Now().Add(time.Hour).Unix() })

	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }
	for table, item := range map[string]map[string]types.AttributeValue{
		dynamostore.TableProcesses: {
			"process_key": s("acme#PO-bad-record"), "organization_id": s("acme"), "revision": n(1),
			"closed": &types.AttributeValueMemberBOOL{Value: false}, "due_kind": s(cardflow.DueWait), "due_at": n(1000),
			"record": s(`{"organization_id": "acme", "secret": `),
		},
		dynamostore.TableExecutions: {
			"workflow_id": s("wf-1"), "workflow_execution_id": s(badExecution.WorkflowExecutionID), "organization_id": s("acme"),
			"revision": n(1), "record": s(`{"status": 7, "secret": "x"}`),
		},
	} {
		if _, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(prefix + table), Item: item}); err != nil {
			t.Fatal(err)
		}
	}

	outbox, err := boltstore.Open(filepath.Join(t.TempDir(), "outbox.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(store, outbox, localmode.Config{Log: log})
	if err != nil {
		outbox.Close()
		t.Fatal(err)
	}
	defer st.Close()
	rep, err := st.Service.Housekeep(t.Context())
	if want := (app.HousekeepReport{ProcessesClosed: 1, EarlyResumesDropped: 1, ProcessesDeleted: 1, IdempotencyDeleted: 1}); err != nil || rep != want {
		t.Errorf("housekeeping: got %+v, %v, want %+v", rep, err, want)
	}
	for _, want := range []string{
		`msg="housekeeping skips a process record that cannot be read" organization=acme process_id=PO-bad-record`,
		`msg="housekeeping skips a wait whose execution cannot be read" organization=acme workflow=wf-1 execution=` + badExecution.WorkflowExecutionID,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log: got %q, want %q", logs.String(), want)
		}
	}
	if strings.Contains(logs.String(), "secret") {
		t.Errorf("log: got %q, want nothing of the items' content", logs.String())
	}
}
