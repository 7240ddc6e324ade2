package cardflow

import (
	"context"
	"errors"
	"time"
)

// ErrUnreadable is what the error of a store read wraps when the record is
// there but does not decode: damaged, or nested deeper than the decoder
// reads. Reading it again fails the same way, so callers give up on the
// record rather than retry.
var ErrUnreadable = errors.New("the stored record cannot be read")

// UnreadableError is how a store reports a record that does not decode;
// errors.Is(err, ErrUnreadable) holds for it.
type UnreadableError struct {
	// Err says why the record did not decode.
	Err error
	// Head is what could still be read of an execution: the execution
	// less the values that lay too deep to decode (see Prune), with its
	// revision, so that FailUnreadable can write it back. It is nil for
	// other records, and for an execution that does not decode even so.
	Head *Execution
}

func (e *UnreadableError) Error() string        { return e.Err.Error() }
func (e *UnreadableError) Unwrap() error        { return e.Err }
func (e *UnreadableError) Is(target error) bool { return target == ErrUnreadable }

// Reasons FailUnreadable gives.
const (
	reasonUnreadableExecution = "its stored record cannot be read in full, so it cannot go on; what could not be read is left out"
	reasonUnreadableRecord    = "a record it needs cannot be read from the store, so it cannot go on"
)

// FailUnreadable ends as FAILED the open execution ref, which cannot go on
// because a record it needs does not decode: Advance failed with
// ErrUnreadable, and would fail so for ever. When the execution's own
// record is the one, its head is written back in its place, which makes
// it readable again; its process record is closed where it can be read.
// It returns the execution as it now is; an error wrapping ErrUnreadable
// when the execution has no head, so nothing can be written; or the
// store's error.
func FailUnreadable(ctx context.Context, s Store, ref ExecutionRef, now time.Time) (*Execution, error) {
	reason := reasonUnreadableRecord
	ex, err := s.GetExecution(ctx, ref.OrganizationID, ref.WorkflowID, ref.ExecutionID)
	var ue *UnreadableError
	if errors.As(err, &ue) && ue.Head != nil {
		ex, err, reason = ue.Head, nil, reasonUnreadableExecution
	}
	if err != nil {
		return nil, err
	}
	if !ex.Open() {
		return ex, nil
	}
	if err := CloseProcess(ctx, s, ex, now); err != nil && !errors.Is(err, ErrUnreadable) {
		return nil, err
	}
	ms, wait := now.UnixMilli(), ex.State.Wait
	ex.Status, ex.ModifiedOn = ExecFailed, ms
	ex.WorkflowOutputPayload = map[string]any{"error": reason, "step": ex.State.StepID}
	ex.WorkflowEventLog.Events = append(ex.WorkflowEventLog.Events,
		Event{At: ms, Type: EventFailed, StepID: ex.State.StepID, Step: ex.WorkflowCurrentState, Message: reason})
	ex.WorkflowEventLog.Total++
	ex.State.FailedStep = ex.State.StepID
	ex.State.StepID, ex.State.Phase, ex.State.WakeAt, ex.State.Wait = "", "", 0, 0
	if err := s.PutExecution(ctx, ex); err != nil {
		return nil, err
	}
	_ = CancelApproval(ctx, s, nil, ex, wait, now) // an answer closes one this leaves open
	return ex, nil
}
