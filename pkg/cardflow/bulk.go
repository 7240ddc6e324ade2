package cardflow

import "context"

// Bulk actions: what a bulk operation does to every execution its search
// selects.
const (
	BulkCancel  = "cancel"
	BulkRedrive = "redrive"
)

// Bulk operation statuses.
const (
	BulkRunning   = "RUNNING"
	BulkSucceeded = "SUCCEEDED"
	BulkFailed    = "FAILED"
)

// MaxBulkFailures is how many failures a bulk operation keeps with their
// reasons; it counts them all.
const MaxBulkFailures = 10

// BulkItem names one execution of a bulk operation's page, with what
// became of it once acted on.
type BulkItem struct {
	WorkflowID  string `json:"workflow_id"`
	ExecutionID string `json:"workflow_execution_id"`
	Reason      string `json:"reason,omitempty"`
}

// BulkOperation is a job that cancels or redrives every execution of its
// organization that Filter selects. It works page by page of the search
// and records its progress after each, so that a worker that stops (a
// crash, a timeout) leaves it to the next one where it was: Cursor is where
// the next page starts, and Batch the page being worked, recorded before
// any of its executions is acted on. Counts change only with the write
// that ends a batch, so no execution counts twice.
type BulkOperation struct {
	OrganizationID  string          `json:"organization_id"`
	WorkspaceID     string          `json:"workspace_id"`
	BulkOperationID string          `json:"bulk_operation_id"`
	Action          string          `json:"action"`
	Filter          ExecutionFilter `json:"filter"`
	// ClientToken makes a start idempotent: a second start with the token
	// answers the operation the first one made.
	ClientToken string `json:"client_token,omitempty"`
	Status      string `json:"status"`
	// Reason says why a FAILED operation stopped.
	Reason   string     `json:"reason,omitempty"`
	Done     int        `json:"done"`
	Failed   int        `json:"failed"`
	Skipped  int        `json:"skipped"`
	Failures []BulkItem `json:"failures"`
	// Cursor is the page key the next page starts after; nil before the
	// first page.
	Cursor *SearchKey `json:"cursor,omitempty"`
	// Batch is the page being worked; Next is the cursor after it, and
	// Last tells that no page follows it.
	Batch []BulkItem `json:"batch,omitempty"`
	Next  *SearchKey `json:"next,omitempty"`
	Last  bool       `json:"last,omitempty"`
	// LeaseUntil (epoch ms) is until when the worker that wrote it works
	// the operation; another leaves it alone until then.
	LeaseUntil int64  `json:"lease_until,omitempty"`
	CreatedBy  string `json:"created_by"`
	CreatedOn  int64  `json:"created_on"`
	ModifiedOn int64  `json:"modified_on"`
	Revision   int64  `json:"revision"`
}

// BulkRef names one bulk operation.
type BulkRef struct {
	OrganizationID  string `json:"organization_id"`
	BulkOperationID string `json:"bulk_operation_id"`
}

// BulkStore persists bulk operations. Adapters of Store implement it; the
// contract suite covers it.
type BulkStore interface {
	// CreateBulkOperation stores a new operation at revision 1; its id
	// must be unused. With a ClientToken already used in the organization
	// it stores nothing and returns the operation that token made.
	CreateBulkOperation(ctx context.Context, op *BulkOperation) (*BulkOperation, error)
	GetBulkOperation(ctx context.Context, org, id string) (*BulkOperation, error)
	// PutBulkOperation replaces an operation if its stored revision equals
	// op.Revision, and increments op.Revision; ECONFLICT otherwise.
	PutBulkOperation(ctx context.Context, op *BulkOperation) error
	// ListRunningBulkOperations returns the RUNNING operations of every
	// organization, for the workers; it is on no request path.
	ListRunningBulkOperations(ctx context.Context) ([]BulkRef, error)
}
