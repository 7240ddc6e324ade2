package dynamostore_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func newExecution(org string) *cardflow.Execution {
	return &cardflow.Execution{OrganizationID: org, WorkflowID: "wf-" + cardflow.NewID(time.Now()), WorkflowExecutionID: cardflow.NewID(time.Now()),
		Status: cardflow.ExecRunning, CreatedOn: 1700000000000}
}

func newProcess(e *cardflow.Execution, id string) *cardflow.Process {
	return &cardflow.Process{OrganizationID: e.OrganizationID, ProcessID: id, WorkflowID: e.WorkflowID, ExecutionID: e.WorkflowExecutionID}
}

func newIdempotency(e *cardflow.Execution, key string) *cardflow.Idempotency {
	return &cardflow.Idempotency{OrganizationID: e.OrganizationID, Key: key, WorkflowID: e.WorkflowID, ExecutionID: e.WorkflowExecutionID,
		ExpiresAt: time.Now().Unix() + 3600} // unexpired, so housekeeping running beside leaves it
}

// TestStartExecutionConflicts checks that a refused start says which of its
// records is taken.
func TestStartExecutionConflicts(t *testing.T) {
	s := newStore(t)
	org := "org-" + cardflow.NewID(time.Now())
	first := newExecution(org)
	if err := s.StartExecution(t.Context(), first, newProcess(first, "PO-1"), newIdempotency(first, "key-1")); err != nil {
		t.Fatal(err)
	}
	again := newExecution(org)
	for _, tc := range []struct {
		name string
		e    *cardflow.Execution
		p    *cardflow.Process
		idem *cardflow.Idempotency
		want string
	}{
		{"open process id", again, newProcess(again, "PO-1"), nil,
			"process id PO-1 belongs to execution " + first.WorkflowExecutionID + ", which is still open"},
		{"used idempotency key", again, newProcess(again, "PO-2"), newIdempotency(again, "key-1"), "idempotency key key-1 is already used"},
		{"used execution id", first, newProcess(first, "PO-3"), nil, "execution " + first.WorkflowExecutionID + " already exists"},
	} {
		err := s.StartExecution(t.Context(), tc.e, tc.p, tc.idem)
		if got := cardflow.ErrorCode(err); got != cardflow.ECONFLICT || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v (code %q), want %s saying %q", tc.name, err, got, cardflow.ECONFLICT, tc.want)
		}
	}
}

// TestRevisionedPutOfAnotherOrganization checks that a put of a record
// stored under the same key by another organization is NOT_FOUND, not a
// conflict: that record does not exist for the caller.
func TestRevisionedPutOfAnotherOrganization(t *testing.T) {
	s := newStore(t)
	e := newExecution("org-" + cardflow.NewID(time.Now()))
	if err := s.CreateExecution(t.Context(), e); err != nil {
		t.Fatal(err)
	}
	foreign := *e
	foreign.OrganizationID = "org-" + cardflow.NewID(time.Now())
	if got, want := cardflow.ErrorCode(s.PutExecution(t.Context(), &foreign)), cardflow.ENOTFOUND; got != want {
		t.Errorf("PutExecution of another organization's execution: got code %q, want %q", got, want)
	}
}

// TestExpiresAt checks the TTL attribute: on idempotency records always, on
// process records once they carry an expiry.
func TestExpiresAt(t *testing.T) {
	s := newStore(t)
	prefix := tables(t)
	e := newExecution("org-" + cardflow.NewID(time.Now()))
	p := newProcess(e, "PO-1")
	idem := newIdempotency(e, "key-1")
	if err := s.StartExecution(t.Context(), e, p, idem); err != nil {
		t.Fatal(err)
	}
	expiresAt := func(table, key string, value string) string {
		t.Helper()
		out, err := shared.client.GetItem(t.Context(), &dynamodb.GetItemInput{
			TableName: aws.String(prefix + table), ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{key: &types.AttributeValueMemberS{Value: value}},
		})
		if err != nil {
			t.Fatal(err)
		}
		n, _ := out.Item["expires_at"].(*types.AttributeValueMemberN)
		if n == nil {
			return "none"
		}
		return n.Value
	}
	process := func() string { return expiresAt("processes", "process_key", e.OrganizationID+"#PO-1") }

	if got, want := expiresAt("idempotency", "idempotency_key", e.OrganizationID+"#key-1"), strconv.FormatInt(idem.ExpiresAt, 10); got != want {
		t.Errorf("idempotency record: got expires_at %s, want %s", got, want)
	}
	if got, want := process(), "none"; got != want {
		t.Errorf("open process record: got expires_at %s, want %s", got, want)
	}
	p.Closed, p.ExpiresAt = true, 1700604800
	if err := s.PutProcess(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	if got, want := process(), "1700604800"; got != want {
		t.Errorf("closed process record: got expires_at %s, want %s", got, want)
	}
}
