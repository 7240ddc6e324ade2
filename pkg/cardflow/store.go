package cardflow

import "context"

// Page size limits of every list, as openapi.yaml documents them.
const (
	DefaultLimit = 20
	MaxLimit     = 30
)

// PageSize applies the default and the maximum to a requested page size.
func PageSize(n int) int {
	switch {
	case n <= 0:
		return DefaultLimit
	case n > MaxLimit:
		return MaxLimit
	}
	return n
}

// WorkflowKey is the page key of workflow lists.
type WorkflowKey struct {
	OrganizationID  string `json:"organization_id"`
	WorkflowID      string `json:"workflow_id"`
	WorkflowVersion int    `json:"workflow_version"`
}

// CardKey is the page key of card lists.
type CardKey struct {
	OrganizationID string `json:"organization_id"`
	CardID         string `json:"card_id"`
	CardVersion    int    `json:"card_version"`
}

// ExecutionKey is the page key of execution lists.
type ExecutionKey struct {
	WorkflowID          string `json:"workflow_id"`
	WorkflowExecutionID string `json:"workflow_execution_id"`
}

// ListOptions selects one page of a list: at most Limit items that come after
// After in the list's order (newest first). A nil After starts at the top.
type ListOptions[K any] struct {
	Limit int
	After *K
}

// Page is one page of a list. LastKey is set only when more items follow.
type Page[T, K any] struct {
	Items   []T
	LastKey *K
}

// Store persists the service's records. Every method that takes an
// organization treats a record of another organization as absent
// (ENOTFOUND), never as forbidden. Lists are newest first.
//
// Every adapter passes the contract suite in internal/storetest.
type Store interface {
	// SaveWorkflowVersion stores w as a new DRAFT version. An empty
	// WorkflowID starts a new workflow (the store assigns the id and version 1,
	// which is latest until a version is published); otherwise the workflow
	// must exist in w.OrganizationID and w gets the next version number.
	// Concurrent saves never share or lose a version. The store sets
	// WorkflowID, WorkflowVersion, status and latest on w.
	SaveWorkflowVersion(ctx context.Context, w *Workflow) error
	// GetWorkflow returns one version of a workflow.
	GetWorkflow(ctx context.Context, org, workflowID string, version int) (*Workflow, error)
	// GetLatestWorkflow returns the version of a workflow marked latest.
	GetLatestWorkflow(ctx context.Context, org, workflowID string) (*Workflow, error)
	// ListWorkflows lists every version of every workflow of org, ordered by
	// workflow id then version, both descending.
	ListWorkflows(ctx context.Context, org string, opt ListOptions[WorkflowKey]) (Page[*Workflow, WorkflowKey], error)
	// PublishWorkflow makes a version ACTIVE and the only latest one of its
	// workflow, in one atomic change.
	PublishWorkflow(ctx context.Context, org, workflowID string, version int, by string, now int64) (*Workflow, error)

	// SaveCardVersion is SaveWorkflowVersion for cards.
	SaveCardVersion(ctx context.Context, c *Card) error
	GetCard(ctx context.Context, org, cardID string, version int) (*Card, error)
	// GetLatestActiveCard returns the version of a card marked latest when
	// it is ACTIVE; ENOTFOUND when none is (no version was published).
	GetLatestActiveCard(ctx context.Context, org, cardID string) (*Card, error)
	// ListCards lists every version of every card of org, ordered by card id
	// then version, both descending.
	ListCards(ctx context.Context, org string, opt ListOptions[CardKey]) (Page[*Card, CardKey], error)
	PublishCard(ctx context.Context, org, cardID string, version int, by string, now int64) (*Card, error)

	// CreateExecution stores a new execution; its id must be unused.
	CreateExecution(ctx context.Context, e *Execution) error
	// PutExecution replaces a stored execution if its stored revision
	// equals e.Revision, and increments e.Revision; ECONFLICT when another
	// writer changed it first. Its state is stored with it.
	//
	// A write that ends the execution (from RUNNING or WAITING to a final
	// status) also closes its process record, in the same atomic change,
	// as CloseProcess does: unless the record belongs to another execution
	// or is closed already, it is marked closed and expires
	// ClosedProcessTTL after the execution's modified_on. The engine so
	// stores an end with one write, and no crash leaves a finished
	// execution holding its process id.
	PutExecution(ctx context.Context, e *Execution) error
	GetExecution(ctx context.Context, org, workflowID, executionID string) (*Execution, error)
	// GetExecutionJSON is the JSON of what GetExecution returns, without
	// the state and revision the API does not show, sparing a read the
	// decode and encode of its free-form values.
	GetExecutionJSON(ctx context.Context, org, workflowID, executionID string) ([]byte, error)
	// GetExecutionHead returns the execution as DecodeHead gives it,
	// without decoding its parts, though checking that they could be
	// read: what a caller needs that acts on an execution by its ids,
	// status and current step (a resume). It fails as GetExecution does:
	// ENOTFOUND, or an error wrapping ErrUnreadable when a part does not
	// read.
	GetExecutionHead(ctx context.Context, org, workflowID, executionID string) (*Execution, error)
	// GetExecutionRevision returns the stored revision of an execution
	// alone, so that whoever holds the execution as it last wrote it can
	// tell whether it is still what is stored without reading it whole;
	// ENOTFOUND as GetExecution.
	GetExecutionRevision(ctx context.Context, org, workflowID, executionID string) (int64, error)
	// GetExecutionStatus returns an execution's status and modified_on
	// alone, for a request that waits for a change (waitForExecution) and
	// reads the whole execution only to answer; ENOTFOUND as GetExecution.
	GetExecutionStatus(ctx context.Context, org, workflowID, executionID string) (status string, modifiedOn int64, err error)
	// ListWorkflowExecutions lists the executions of one workflow of org;
	// ENOTFOUND when org has no such workflow. Items of both execution
	// lists carry at least the fields the lists show: all but
	// CondensedLogs, the input and output payloads and the steps and
	// connections of WorkflowDetails, which an adapter may leave empty.
	ListWorkflowExecutions(ctx context.Context, org, workflowID string, opt ListOptions[ExecutionKey]) (Page[*Execution, ExecutionKey], error)
	// ListExecutions lists the executions of every workflow of org, ordered
	// by execution id descending.
	ListExecutions(ctx context.Context, org string, opt ListOptions[ExecutionKey]) (Page[*Execution, ExecutionKey], error)

	// PutSchema stores the schema record of a workflow version.
	PutSchema(ctx context.Context, s *Schema) error
	GetSchema(ctx context.Context, org, workflowID string, version int) (*Schema, error)

	// CreateAPIKey stores a new key; its hash and key id must be unused.
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// GetAPIKeyByHash returns the key with the given hash, revoked or not.
	GetAPIKeyByHash(ctx context.Context, hash string) (*APIKey, error)
	// ListAPIKeys lists keys, of one organization or of all when org is "".
	ListAPIKeys(ctx context.Context, org string) ([]*APIKey, error)
	// RevokeAPIKey marks a key revoked; revoking twice is not an error.
	RevokeAPIKey(ctx context.Context, keyID string, now int64) (*APIKey, error)

	EngineStore
	ApprovalStore
	EventStore
	LimitStore
	SearchStore
	BulkStore
	ConversationStore
	DelegationStore

	Close() error
}
