package storetest

import (
	"slices"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func bulkOperation(org string) *cardflow.BulkOperation {
	return &cardflow.BulkOperation{
		OrganizationID: org, WorkspaceID: "ws-1", BulkOperationID: newID(), Action: cardflow.BulkCancel,
		Filter: cardflow.ExecutionFilter{Status: cardflow.ExecWaiting, CreatedBefore: 1700000000000},
		Status: cardflow.BulkRunning, Failures: []cardflow.BulkItem{}, CreatedBy: "ann", CreatedOn: 1700000000000, ModifiedOn: 1700000000000,
	}
}

func testBulk(t *testing.T, e env) {
	t.Run("CreateGetPut", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		op := bulkOperation(org)
		got, err := s.CreateBulkOperation(t.Context(), op)
		mustOK(t, "create", err)
		if op.Revision != 1 || got.Revision != 1 {
			t.Errorf("create: got revisions %d and %d, want 1", op.Revision, got.Revision)
		}
		read, err := s.GetBulkOperation(t.Context(), org, op.BulkOperationID)
		mustOK(t, "get", err)
		sameJSON(t, "get after create", read, op)
		_, err = s.CreateBulkOperation(t.Context(), op)
		wantCode(t, "create with a used id", err, cardflow.ECONFLICT)

		// A batch is recorded, then ended with its counts.
		op.Batch = []cardflow.BulkItem{{WorkflowID: newID(), ExecutionID: newID()}}
		op.Next = &cardflow.SearchKey{WorkflowID: newID(), WorkflowExecutionID: newID(), CreatedOn: 5}
		mustOK(t, "put batch", s.PutBulkOperation(t.Context(), op))
		stale := *op
		op.Batch, op.Cursor, op.Next, op.Done = nil, op.Next, nil, 1
		mustOK(t, "put counts", s.PutBulkOperation(t.Context(), op))
		if op.Revision != 3 {
			t.Errorf("after two puts: got revision %d, want 3", op.Revision)
		}
		wantCode(t, "put at an old revision", s.PutBulkOperation(t.Context(), &stale), cardflow.ECONFLICT)
		read, err = s.GetBulkOperation(t.Context(), org, op.BulkOperationID)
		mustOK(t, "get", err)
		sameJSON(t, "get after puts", read, op)

		wantCode(t, "put of a missing operation", s.PutBulkOperation(t.Context(), bulkOperation(org)), cardflow.ENOTFOUND)
		_, err = s.GetBulkOperation(t.Context(), org, newID())
		wantCode(t, "get of a missing operation", err, cardflow.ENOTFOUND)
	})

	t.Run("ClientToken", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		first := bulkOperation(org)
		first.ClientToken = "nightly-cleanup"
		_, err := s.CreateBulkOperation(t.Context(), first)
		mustOK(t, "create", err)
		again := bulkOperation(org)
		again.ClientToken = first.ClientToken
		got, err := s.CreateBulkOperation(t.Context(), again)
		mustOK(t, "create with a used token", err)
		if got.BulkOperationID != first.BulkOperationID {
			t.Errorf("create with a used token: got operation %s, want the first, %s", got.BulkOperationID, first.BulkOperationID)
		}
		_, err = s.GetBulkOperation(t.Context(), org, again.BulkOperationID)
		wantCode(t, "get of the operation the token refused", err, cardflow.ENOTFOUND)
		// Tokens are per organization.
		other := bulkOperation(newOrg())
		other.ClientToken = first.ClientToken
		got, err = s.CreateBulkOperation(t.Context(), other)
		mustOK(t, "create in another organization", err)
		if got.BulkOperationID != other.BulkOperationID {
			t.Errorf("another organization's token: got operation %s, want its own %s", got.BulkOperationID, other.BulkOperationID)
		}
	})

	t.Run("Running", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		a, b := bulkOperation(org), bulkOperation(org)
		for _, op := range []*cardflow.BulkOperation{a, b} {
			_, err := s.CreateBulkOperation(t.Context(), op)
			mustOK(t, "create", err)
		}
		b.Status = cardflow.BulkSucceeded
		mustOK(t, "put", s.PutBulkOperation(t.Context(), b))
		refs, err := s.ListRunningBulkOperations(t.Context())
		mustOK(t, "list running", err)
		if !slices.Contains(refs, cardflow.BulkRef{OrganizationID: org, BulkOperationID: a.BulkOperationID}) {
			t.Errorf("running operations: got %v, want %s among them", refs, a.BulkOperationID)
		}
		if slices.Contains(refs, cardflow.BulkRef{OrganizationID: org, BulkOperationID: b.BulkOperationID}) {
			t.Errorf("running operations: got %v, want no %s, which succeeded", refs, b.BulkOperationID)
		}
	})

	t.Run("Isolation", func(t *testing.T) {
		s := e.store(t)
		op := bulkOperation(newOrg())
		_, err := s.CreateBulkOperation(t.Context(), op)
		mustOK(t, "create", err)
		other := newOrg()
		_, err = s.GetBulkOperation(t.Context(), other, op.BulkOperationID)
		wantCode(t, "get of another organization's operation", err, cardflow.ENOTFOUND)
		theirs := *op
		theirs.OrganizationID = other
		wantCode(t, "put as another organization", s.PutBulkOperation(t.Context(), &theirs), cardflow.ENOTFOUND)
	})
}
