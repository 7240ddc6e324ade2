package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// BulkLease is how long a worker holds a bulk operation after each write
// of it: another worker takes it over only once that has passed, so a
// worker that stopped (a crash, a timeout) hands it on within a lease.
const BulkLease = 2 * time.Minute

// StartBulkInput is the body of startBulkOperation: the action and the
// filters of searchExecutions.
type StartBulkInput struct {
	Action        string `json:"action"`
	Status        string `json:"status,omitempty"`
	WorkflowID    string `json:"workflow_id,omitempty"`
	ProcessID     string `json:"process_id,omitempty"`
	TriggerType   string `json:"trigger_type,omitempty"`
	CreatedAfter  int64  `json:"created_after,omitempty"`
	CreatedBefore int64  `json:"created_before,omitempty"`
	// ClientToken makes the start idempotent: starting again with the
	// same token answers the operation the first start made.
	ClientToken string `json:"client_token,omitempty"`
}

// StartBulkOperation stores a bulk operation that cancels or redrives
// every execution of the caller's organization that the filters select,
// among those created before it starts, and hands it to the workers.
func (s *Bulk) StartBulkOperation(ctx context.Context, in StartBulkInput) (*cardflow.BulkOperation, error) {
	p, err := principal(ctx, cardflow.ScopeExecute)
	if err != nil {
		return nil, err
	}
	if in.Action != cardflow.BulkCancel && in.Action != cardflow.BulkRedrive {
		return nil, cardflow.Errorf(cardflow.EINVALID, "action must be %q or %q, got %q", cardflow.BulkCancel, cardflow.BulkRedrive, in.Action)
	}
	// Visible ASCII, as an Idempotency-Key: a store key can hold neither
	// a NUL nor, readably, anything a person cannot type.
	if in.ClientToken != "" && !clientTokenPattern.MatchString(in.ClientToken) {
		return nil, cardflow.Errorf(cardflow.EINVALID, "client_token must be 1 to 200 visible ASCII characters (! to ~)")
	}
	f := cardflow.ExecutionFilter{Status: in.Status, WorkflowID: in.WorkflowID, ProcessID: in.ProcessID, TriggerType: in.TriggerType,
		CreatedAfter: in.CreatedAfter, CreatedBefore: in.CreatedBefore}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	// Executions created from now on are not the operation's.
	now := s.millis()
	if f.CreatedBefore == 0 || f.CreatedBefore > now+1 {
		f.CreatedBefore = now + 1
	}
	op := &cardflow.BulkOperation{
		OrganizationID: p.OrganizationID, WorkspaceID: p.WorkspaceID, BulkOperationID: cardflow.NewID(s.now()),
		Action: in.Action, Filter: f, ClientToken: in.ClientToken, Status: cardflow.BulkRunning, Failures: []cardflow.BulkItem{},
		CreatedBy: p.Actor, CreatedOn: now, ModifiedOn: now,
	}
	// A time range with nothing in it (created_after not before
	// created_before, or after the start) selects no execution: the
	// operation is done as it starts.
	if f.Empty() {
		op.Status = cardflow.BulkSucceeded
	}
	got, err := s.store.CreateBulkOperation(ctx, op)
	if err != nil {
		return nil, err
	}
	if got.BulkOperationID != op.BulkOperationID && !sameRequest(got, op, in.CreatedBefore) {
		return nil, cardflow.Errorf(cardflow.ECONFLICT, "client_token %q started bulk operation %s with another action or other filters", in.ClientToken, got.BulkOperationID)
	}
	if s.bulkKick != nil && got.Status == cardflow.BulkRunning {
		s.bulkKick()
	}
	return got, nil
}

// sameRequest reports whether a stored operation is what a start with the
// same client token asked for again: the time bound differs when the
// request left it to the start's time.
func sameRequest(stored, op *cardflow.BulkOperation, askedBefore int64) bool {
	a, b := stored.Filter, op.Filter
	if askedBefore == 0 || askedBefore > a.CreatedBefore {
		b.CreatedBefore = a.CreatedBefore
	}
	return stored.Action == op.Action && a == b
}

// GetBulkOperation returns a bulk operation of the caller's organization.
func (s *Bulk) GetBulkOperation(ctx context.Context, id string) (*cardflow.BulkOperation, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	return s.store.GetBulkOperation(ctx, p.OrganizationID, id)
}

// RunBulkOperations works the running bulk operations that no other
// worker holds until until, and leaves the rest for the next round. The
// organizations take turns a page at a time, each working its oldest
// operation it can take: one organization's large operation does not hold
// back another's. Operations started meanwhile join at the next turn.
func (s *Runs) RunBulkOperations(ctx context.Context, until time.Time) error {
	held := map[cardflow.BulkRef]*bulkJob{}
	// Operations the time budget stops are handed on at once rather than
	// at their lease's end; a worker asked to stop leaves them leased.
	defer func() {
		if ctx.Err() != nil {
			return
		}
		for _, j := range held {
			j.op.LeaseUntil = 0
			if err := s.store.PutBulkOperation(ctx, j.op); err != nil && cardflow.ErrorCode(err) != cardflow.ECONFLICT {
				s.log.Error("bulk operation not handed on; it is taken up after its lease", slog.String("organization_id", j.op.OrganizationID),
					slog.String("bulk_operation_id", j.op.BulkOperationID), slog.Any("error", err))
			}
		}
	}()
	left := map[cardflow.BulkRef]bool{} // operations this round leaves alone
	for {
		refs, err := s.store.ListRunningBulkOperations(ctx)
		if err != nil {
			return err
		}
		var orgs []string
		byOrg := map[string][]cardflow.BulkRef{}
		for _, ref := range refs {
			if left[ref] {
				continue
			}
			if _, ok := byOrg[ref.OrganizationID]; !ok {
				orgs = append(orgs, ref.OrganizationID)
			}
			byOrg[ref.OrganizationID] = append(byOrg[ref.OrganizationID], ref)
		}
		worked := false
		for _, org := range orgs {
			for _, ref := range byOrg[org] {
				if err := ctx.Err(); err != nil {
					return err
				}
				if !s.now().Before(until) {
					return nil
				}
				j := held[ref]
				if j == nil {
					if j, err = s.takeBulk(ctx, ref); err != nil || j == nil {
						s.bulkStopped(ref, err)
						left[ref] = true
						continue
					}
					held[ref] = j
				}
				more, err := s.bulkPage(ctx, j)
				if !more || err != nil {
					delete(held, ref)
					left[ref] = true
					s.bulkStopped(ref, err)
				}
				worked = true
				break // the next organization's turn
			}
		}
		if !worked {
			return nil
		}
	}
}

// bulkStopped logs an operation that stopped on an error.
func (s *Runs) bulkStopped(ref cardflow.BulkRef, err error) {
	if err != nil {
		s.log.Error("bulk operation stopped; the next round goes on with it", slog.String("organization_id", ref.OrganizationID),
			slog.String("bulk_operation_id", ref.BulkOperationID), slog.Any("error", err))
	}
}

// bulkJob is an operation a worker holds: its record as last written, and
// the context its actions run under.
type bulkJob struct {
	op    *cardflow.BulkOperation
	actor context.Context
}

// takeBulk reads an operation and takes its lease; nil when it is not
// running, or another worker holds it.
func (s *Runs) takeBulk(ctx context.Context, ref cardflow.BulkRef) (*bulkJob, error) {
	op, err := s.store.GetBulkOperation(ctx, ref.OrganizationID, ref.BulkOperationID)
	if err != nil {
		return nil, err
	}
	if op.Status != cardflow.BulkRunning || op.LeaseUntil > s.millis() {
		return nil, nil
	}
	j := &bulkJob{op: op, actor: cardflow.NewContextWithPrincipal(ctx, &cardflow.Principal{
		OrganizationID: op.OrganizationID, WorkspaceID: op.WorkspaceID,
		Scopes: []string{cardflow.ScopeExecute}, Actor: BulkActor(op.BulkOperationID),
	})}
	if ok, err := s.saveBulk(ctx, op); !ok {
		return nil, err
	}
	return j, nil
}

// saveBulk writes op with its lease renewed (cleared once it has ended).
// It reports false, with no error, when another worker took op over.
func (s *Runs) saveBulk(ctx context.Context, op *cardflow.BulkOperation) (bool, error) {
	now := s.millis()
	op.ModifiedOn, op.LeaseUntil = now, now+BulkLease.Milliseconds()
	if op.Status != cardflow.BulkRunning {
		op.LeaseUntil = 0
	}
	err := s.store.PutBulkOperation(ctx, op)
	if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
		return false, nil
	}
	return err == nil, err
}

// bulkPage works one page of j's operation: it records the page before
// acting on it, then acts on each execution of it and records the counts
// with the cursor past it. It reports whether the operation goes on. A
// conflict on any write means another worker took the operation over:
// this one leaves it.
func (s *Runs) bulkPage(ctx context.Context, j *bulkJob) (bool, error) {
	op := j.op
	if len(op.Batch) == 0 && !op.Last {
		page, err := s.store.SearchExecutions(ctx, op.OrganizationID, op.Filter, cardflow.ListOptions[cardflow.SearchKey]{Limit: cardflow.MaxLimit, After: op.Cursor})
		if err != nil {
			return false, err
		}
		for _, e := range page.Items {
			op.Batch = append(op.Batch, cardflow.BulkItem{WorkflowID: e.WorkflowID, ExecutionID: e.WorkflowExecutionID})
		}
		op.Next, op.Last = page.LastKey, page.LastKey == nil
		// A worker that stops after this write leaves the page recorded,
		// and the next worker works it again.
		if ok, err := s.saveBulk(ctx, op); !ok {
			return false, err
		}
	}
	for i, res := range s.bulkActAll(j.actor, op) {
		item, reason, failed := op.Batch[i], res.reason, res.failed
		switch {
		case failed:
			op.Failed++
			if len(op.Failures) < cardflow.MaxBulkFailures {
				item.Reason = reason
				op.Failures = append(op.Failures, item)
			}
		case reason != "":
			op.Skipped++
		default:
			op.Done++
		}
	}
	if op.Next != nil {
		op.Cursor = op.Next
	}
	op.Batch, op.Next = nil, nil
	if op.Last {
		op.Status = cardflow.BulkSucceeded
	}
	ok, err := s.saveBulk(ctx, op)
	return ok && op.Status == cardflow.BulkRunning, err
}

// bulkParallel is how many executions of a page a worker acts on at once:
// each action is a few store requests and the executions are independent,
// so they overlap their waits (and the embedded store commits them
// together).
const bulkParallel = 10

type bulkResult struct {
	reason string
	failed bool
}

// bulkActAll acts on every execution of op's batch, bulkParallel at a
// time, and returns what became of each.
func (s *Runs) bulkActAll(ctx context.Context, op *cardflow.BulkOperation) []bulkResult {
	out := make([]bulkResult, len(op.Batch))
	sem := make(chan struct{}, bulkParallel)
	var wg sync.WaitGroup
	for i, item := range op.Batch {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i].reason, out[i].failed = s.bulkAct(ctx, op, item)
		}()
	}
	wg.Wait()
	return out
}

// BulkActor is who a bulk operation acts as: what the executions it
// cancels or redrives record as having asked.
func BulkActor(id string) string { return "bulk operation " + id }

// bulkAct applies op's action to one execution. It answers "" when it
// acted, a reason with failed false when there was nothing to do (the
// execution had ended, or is not there), and a reason with failed true
// when the action failed. An execution this operation acted on before a
// restart counts as acted on: the action is conditional on the execution's
// state, so it never runs twice, and the execution records who asked.
func (s *Runs) bulkAct(ctx context.Context, op *cardflow.BulkOperation, item cardflow.BulkItem) (reason string, failed bool) {
	var err error
	switch op.Action {
	case cardflow.BulkCancel:
		_, err = s.Cancel(ctx, CancelInput{WorkflowID: item.WorkflowID, WorkflowExecutionID: item.ExecutionID, Reason: "cancelled in bulk"})
	case cardflow.BulkRedrive:
		// A redriven execution may fail again, and a second redrive would
		// then act twice: its log tells whether this operation redrove it.
		ex, gerr := s.store.GetExecution(ctx, op.OrganizationID, item.WorkflowID, item.ExecutionID)
		if gerr == nil && actedOn(ex, op) {
			return "", false
		}
		_, err = s.RedriveExecution(ctx, RedriveInput{WorkflowID: item.WorkflowID, WorkflowExecutionID: item.ExecutionID})
	default:
		return "action " + op.Action + " is not known", true
	}
	switch cardflow.ErrorCode(err) {
	case "":
		return "", false
	case cardflow.ECONFLICT:
		ex, gerr := s.store.GetExecution(ctx, op.OrganizationID, item.WorkflowID, item.ExecutionID)
		if gerr != nil {
			return cardflow.ErrorMessage(gerr), true
		}
		if actedOn(ex, op) {
			return "", false
		}
		return cardflow.ErrorMessage(err), false
	case cardflow.ENOTFOUND:
		return cardflow.ErrorMessage(err), false
	case cardflow.ETHROTTLED:
		// At the organization's cap on open executions: nothing was
		// changed, and a later operation can act on it.
		return "refused: " + cardflow.ErrorMessage(err), true
	}
	return cardflow.ErrorMessage(err), true
}

// actedOn reports whether op's action on ex already happened.
func actedOn(ex *cardflow.Execution, op *cardflow.BulkOperation) bool {
	actor := BulkActor(op.BulkOperationID)
	switch op.Action {
	case cardflow.BulkCancel:
		return ex.Status == cardflow.ExecCancelled && ex.ModifiedBy != nil && *ex.ModifiedBy == actor
	case cardflow.BulkRedrive:
		for _, ev := range ex.WorkflowEventLog.Events {
			if ev.Type == cardflow.EventRedriven && ev.Actor == actor {
				return true
			}
		}
	}
	return false
}
