package app

import (
	"context"
	"sync"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// What waitForExecution waits for.
const (
	// UntilFinal answers once the execution has finished.
	UntilFinal = "final"
	// UntilChange answers once the execution changed after Since.
	UntilChange = "change"
	// MaxWait bounds a wait, within API Gateway's 29 seconds.
	MaxWait = 25 * time.Second
)

// WaitInput is what waitForExecution waits for.
type WaitInput struct {
	WorkflowID, WorkflowExecutionID string
	// Until is UntilFinal or UntilChange.
	Until string
	// Since is the modified_on after which a change counts (UntilChange);
	// without it, a change after the request's first read counts.
	Since    int64
	HasSince bool
	// Timeout is how long to wait at most, up to MaxWait; then the answer
	// is the execution as it is.
	Timeout time.Duration
}

// Defaults of the store poller, the watcher of a service that hears of no
// changes (a Lambda function): it reads the execution after 100 ms, then
// each time half as long again after the last read, up to once a second,
// so a short wait is answered soon and a long one costs about 30 reads.
const (
	pollFirst = 100 * time.Millisecond
	pollMax   = time.Second
)

// WithWatcher sets what tells waiting requests that an execution changed;
// without one they poll the store (pollFirst, then half as long again up
// to pollMax).
func WithWatcher(w cardflow.ExecutionWatcher) Option { return func(s *Base) { s.watcher = w } }

// WithNotifier sets who hears of the changes the service itself stores
// (a cancel), for the requests that wait for them.
func WithNotifier(n cardflow.ExecutionNotifier) Option { return func(s *Base) { s.notify = n } }

// WaitForExecutionJSON answers like GetExecutionJSON once the execution
// has finished (UntilFinal) or changed after in.Since (UntilChange), or
// when in.Timeout has passed, with the execution as it then is. A request
// whose caller went away, or a server that shuts down, ends the wait the
// same way.
func (s *Executions) WaitForExecutionJSON(ctx context.Context, in WaitInput) ([]byte, error) {
	p, err := principal(ctx, cardflow.ScopeRead)
	if err != nil {
		return nil, err
	}
	if in.Until != UntilFinal && in.Until != UntilChange {
		return nil, cardflow.Errorf(cardflow.EINVALID, "until must be %s or %s, got %q", UntilFinal, UntilChange, in.Until)
	}
	if in.Timeout < 0 || in.Timeout > MaxWait {
		return nil, cardflow.Errorf(cardflow.EINVALID, "the timeout must be from 0 to %d seconds", int(MaxWait/time.Second))
	}
	ref := cardflow.ExecutionRef{OrganizationID: p.OrganizationID, WorkflowID: in.WorkflowID, ExecutionID: in.WorkflowExecutionID}
	// Watching before the first read loses no change in between.
	changed, stop := s.watcher.Watch(ref)
	defer stop()
	timeout := time.NewTimer(in.Timeout)
	defer timeout.Stop()
	// A timeout of 0 answers the first read.
	since, last := in.Since, in.Timeout == 0
	// Each look reads the status alone; the answer reads the execution.
	answer := func() ([]byte, error) {
		return s.GetExecutionJSON(ctx, in.WorkflowID, in.WorkflowExecutionID)
	}
	for first := true; ; first = false {
		status, modified, err := s.store.GetExecutionStatus(ctx, p.OrganizationID, in.WorkflowID, in.WorkflowExecutionID)
		if err != nil {
			return nil, err
		}
		if first && !in.HasSince {
			since = modified
		}
		open := status == cardflow.ExecRunning || status == cardflow.ExecWaiting
		if last || in.Until == UntilFinal && !open || in.Until == UntilChange && modified > since {
			return answer()
		}
		select {
		case _, ok := <-changed:
			if !ok {
				return answer()
			}
		case <-timeout.C:
			last = true // read once more: the answer is the current item
		case <-ctx.Done():
			return answer() // nobody waits for the answer any more
		}
	}
}

// pollWatcher is the watcher of a service that hears of no changes: it
// signals at growing intervals, and the waiter reads the store each time.
type pollWatcher struct{ first, max time.Duration }

func (w pollWatcher) Watch(cardflow.ExecutionRef) (<-chan struct{}, func()) {
	ch, done := make(chan struct{}, 1), make(chan struct{})
	go func() {
		d := w.first
		t := time.NewTimer(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			select {
			case ch <- struct{}{}:
			default:
			}
			d = min(d*3/2, w.max)
			t.Reset(d)
		}
	}()
	return ch, sync.OnceFunc(func() { close(done) })
}
