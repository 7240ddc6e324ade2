package sfnrunner

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// MaxWaitSeconds bounds the timeout of one Park task: 30 days. A wait
// without a deadline, or with a later one, parks again when it passes,
// which costs four state transitions a month; Step Functions ends a
// Standard execution after a year.
const MaxWaitSeconds = 30 * 24 * 60 * 60

// deadlineGrace is how many seconds a Park task outlives its wait's
// deadline. The resume use case refuses a resume from the deadline on.
const deadlineGrace = 1

// Sleeping is the status Advance answers for an execution that sleeps in a
// delay step until wake_at.
const Sleeping = cardflow.Sleeping

// Advancer is the engine, as the handlers use it.
type Advancer interface {
	Advance(ctx context.Context, ref cardflow.ExecutionRef) (cardflow.AdvanceResult, error)
}

// AdvanceInput is the input of the Advance Lambda handler.
type AdvanceInput struct {
	Execution cardflow.ExecutionRef `json:"execution"`
	// GiveUp is set by the definition's GiveUp state once Advance has
	// failed for good: Advance then records the execution FAILED.
	GiveUp *GiveUpInput `json:"give_up,omitempty"`
}

// AdvanceOutput is what Advance answers; the definition routes on Status.
// Every field is always present, as the definition's ResultSelector needs.
type AdvanceOutput struct {
	// Status is RUNNING, WAITING, SLEEPING or the final status.
	Status string `json:"status"`
	// WakeAt is when a SLEEPING execution wakes (RFC 3339, whole seconds).
	WakeAt string `json:"wake_at"`
	// TimeoutSeconds is how long Park waits for a WAITING execution: until
	// a second after the wait's deadline, at most MaxWaitSeconds.
	TimeoutSeconds int64 `json:"timeout_seconds"`
	// Wait is the sequence number of the open wait of a WAITING execution.
	Wait int `json:"wait"`
	// ProcessID names the process record holding the wait.
	ProcessID string `json:"process_id"`
}

// ParkInput is the input of the Park Lambda handler.
type ParkInput struct {
	Execution      cardflow.ExecutionRef `json:"execution"`
	Wait           int                   `json:"wait"`
	ProcessID      string                `json:"process_id"`
	TimeoutSeconds int64                 `json:"timeout_seconds"`
	TaskToken      string                `json:"task_token"`
}

// Handlers are the Lambda handlers the state machine invokes: Advance, and
// Park of the embedded Parker.
type Handlers struct {
	*Parker
	eng Advancer
	// store is the Parker's store, as the whole port: Advance ends in it
	// the executions it cannot run.
	store cardflow.Store
	now   func() time.Time
	log   *slog.Logger
}

// Parker is the Park handler alone. It needs the store and the Step
// Functions client but not the engine, so the Park function, built with
// NewParker, links neither the engine nor CEL.
type Parker struct {
	store cardflow.EngineStore
	api   API
	log   *slog.Logger
}

// HandlerOption configures Handlers.
type HandlerOption func(*Handlers)

// WithHandlerClock replaces the wall clock that timeouts count from.
func WithHandlerClock(now func() time.Time) HandlerOption {
	return func(h *Handlers) { h.now = now }
}

// WithHandlerLogger sets the logger.
func WithHandlerLogger(l *slog.Logger) HandlerOption { return func(h *Handlers) { h.log = l } }

// NewHandlers returns the handlers over the engine, the store the engine
// uses, and a Step Functions client.
func NewHandlers(eng Advancer, store cardflow.Store, api API, opts ...HandlerOption) (*Handlers, error) {
	if eng == nil || store == nil || api == nil {
		return nil, errors.New("sfnrunner: engine, store and Step Functions client are required")
	}
	h := newHandlers(opts)
	h.eng, h.store = eng, store
	h.Parker = &Parker{store: store, api: api, log: h.log}
	return h, nil
}

// NewParker returns the Park handler over the store the engine uses and a
// Step Functions client. Of the options, only the logger applies.
func NewParker(store cardflow.EngineStore, api API, opts ...HandlerOption) (*Parker, error) {
	if store == nil || api == nil {
		return nil, errors.New("sfnrunner: store and Step Functions client are required")
	}
	return &Parker{store: store, api: api, log: newHandlers(opts).log}, nil
}

// newHandlers returns handlers with the defaults and opts applied.
func newHandlers(opts []HandlerOption) *Handlers {
	h := &Handlers{now: time.Now, log: slog.Default()}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Advance runs the execution until it must wait, sleeps, ends or uses up
// the engine's time budget. An error fails the task; the definition retries
// it with backoff. An execution that cannot go on because a record it needs
// cannot be read, which no retry helps, ends instead.
func (h *Handlers) Advance(ctx context.Context, in AdvanceInput) (AdvanceOutput, error) {
	if in.Execution.OrganizationID == "" || in.Execution.WorkflowID == "" || in.Execution.ExecutionID == "" {
		return AdvanceOutput{}, errors.New("sfnrunner: the input names no execution")
	}
	if in.GiveUp != nil {
		return h.giveUp(ctx, in.Execution, *in.GiveUp)
	}
	res, err := h.eng.Advance(ctx, in.Execution)
	if errors.Is(err, cardflow.ErrUnreadable) {
		return h.failUnreadable(ctx, in.Execution)
	}
	if err != nil {
		h.log.Error("advance failed", slog.String("execution", in.Execution.ExecutionID), slog.Any("error", err))
		return AdvanceOutput{}, err
	}
	out := AdvanceOutput{Status: res.Status}
	switch res.Status {
	case Sleeping:
		// Step Functions wakes at whole seconds; rounding up never wakes
		// the engine before its time.
		out.WakeAt = time.UnixMilli(res.WakeAt + 999).Truncate(time.Second).UTC().Format(time.RFC3339)
	case cardflow.ExecWaiting:
		out.TimeoutSeconds = MaxWaitSeconds
		if res.WakeAt > 0 {
			// A second past the deadline: a resume claimed just before it
			// still finds the task open to end.
			left := (res.WakeAt-h.now().UnixMilli()+999)/1000 + deadlineGrace
			out.TimeoutSeconds = min(max(left, 1), MaxWaitSeconds)
		}
		if res.Wait != nil {
			out.Wait = res.Wait.Seq
		}
		out.ProcessID = res.ProcessID
	}
	return out, nil
}

// failUnreadable ends an execution that cannot go on because a record it
// needs cannot be read, as FAILED in the store (cardflow.FailUnreadable)
// and in Step Functions. When nothing can be written, the state machine
// ends all the same; a failed write fails the task, which the definition
// retries a bounded number of times. It logs by ids only.
func (h *Handlers) failUnreadable(ctx context.Context, ref cardflow.ExecutionRef) (AdvanceOutput, error) {
	ids := []any{slog.String("organization", ref.OrganizationID), slog.String("workflow", ref.WorkflowID), slog.String("execution", ref.ExecutionID)}
	ex, err := cardflow.FailUnreadable(ctx, h.store, ref, h.now())
	switch {
	case err == nil:
		h.log.Warn("a record of the execution cannot be read: the execution has ended", append(ids, slog.String("status", ex.Status))...)
		return AdvanceOutput{Status: ex.Status}, nil
	case errors.Is(err, cardflow.ErrUnreadable):
		h.log.Error("a record of the execution cannot be read, nor can the execution be marked FAILED; its state machine ends", ids...)
		return AdvanceOutput{Status: cardflow.ExecFailed}, nil
	}
	h.log.Error("a record of the execution cannot be read, and marking it FAILED failed", append(ids, slog.String("error", cardflow.ErrorMessage(err)))...)
	return AdvanceOutput{}, err
}

// Park stores the task token on the execution's open wait, so that a
// resume can end the task. When the wait was claimed (or the execution
// ended) before the token was stored, nobody else would end the task, so
// Park ends it at once.
func (h *Parker) Park(ctx context.Context, in ParkInput) error {
	if in.TaskToken == "" || in.ProcessID == "" || in.Execution.OrganizationID == "" {
		return errors.New("sfnrunner: the input lacks a task token, process id or organization")
	}
	for {
		p, err := h.store.GetProcess(ctx, in.Execution.OrganizationID, in.ProcessID)
		if errors.Is(err, cardflow.ErrUnreadable) {
			// No retry would read it: Advance ends the execution.
			return h.endTask(ctx, in.TaskToken)
		}
		if err != nil {
			return err
		}
		w := p.Wait
		if p.Closed || p.ExecutionID != in.Execution.ExecutionID || w == nil || w.Seq != in.Wait || w.Claimed() {
			return h.endTask(ctx, in.TaskToken)
		}
		if w.Token == in.TaskToken {
			return nil
		}
		nudged := w.Nudged
		w.Token, w.Nudged = in.TaskToken, false
		err = h.store.PutProcess(ctx, p)
		if err == nil && nudged {
			return h.endTask(ctx, in.TaskToken)
		}
		if cardflow.ErrorCode(err) != cardflow.ECONFLICT {
			return err
		}
		// A resume or a cancel changed the record meanwhile: look again.
	}
}

// endTask ends a Park task so that Advance runs and sees what became of
// the wait. A task that has ended already is fine.
func (h *Parker) endTask(ctx context.Context, token string) error {
	_, err := h.api.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(claimedOutput)})
	if cardflow.ErrorCode(translate(err)) == cardflow.ECONFLICT {
		return nil
	}
	if err != nil {
		h.log.Error("end the park task", slog.Any("error", err))
		return err
	}
	return nil
}
