package localrunner

import (
	"fmt"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// giveUp ends as FAILED an execution whose Advance failed attempts times in
// a row, saying why, so that it is not left RUNNING for ever; a redrive
// continues it. It reports whether the execution has ended; when the store
// does not take even that, the runner goes on trying.
func (r *Runner) giveUp(ref cardflow.ExecutionRef, attempts int, err error) bool {
	reason := fmt.Sprintf("the runner gave up after %d failed attempts to run it: %s", attempts, cardflow.ErrorMessage(err))
	ex, gerr := cardflow.GiveUp(r.ctx, r.store, ref, reason, r.now())
	if gerr != nil {
		r.log.Error("advance failed for good, and marking the execution FAILED failed; retrying",
			"execution", ref.ExecutionID, "error", err, "mark_error", gerr)
		return false
	}
	if r.notify != nil {
		r.notify.ExecutionChanged(ref)
	}
	r.log.Warn("advance failed for good: the execution has ended", "execution", ref.ExecutionID, "status", ex.Status, "error", err)
	return true
}
