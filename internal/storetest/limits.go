package storetest

import (
	"reflect"
	"sync"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func testLimits(t *testing.T, e env) {
	t.Run("Override", func(t *testing.T) {
		s := e.store(t)
		org, other := newOrg(), newOrg()
		_, err := s.GetLimits(t.Context(), org)
		wantCode(t, "get before any", err, cardflow.ENOTFOUND)
		want := &cardflow.Limits{OrganizationID: org, RatePerSecond: 2.5, Burst: 5, MaxOpenExecutions: 3, ModifiedOn: 1700000000000}
		mustOK(t, "put", s.PutLimits(t.Context(), want))
		got, err := s.GetLimits(t.Context(), org)
		mustOK(t, "get", err)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("get: got %+v, want %+v", got, want)
		}
		_, err = s.GetLimits(t.Context(), other)
		wantCode(t, "get of another organization", err, cardflow.ENOTFOUND)
		mustOK(t, "delete", s.DeleteLimits(t.Context(), org))
		mustOK(t, "delete again", s.DeleteLimits(t.Context(), org))
		_, err = s.GetLimits(t.Context(), org)
		wantCode(t, "get after delete", err, cardflow.ENOTFOUND)
	})

	// Starts that race for the last places of an organization's cap:
	// exactly as many win as there are places, the rest are THROTTLED, and
	// an execution that ends gives its place back. Another organization
	// is not affected.
	t.Run("OpenExecutionCap", func(t *testing.T) {
		s := e.store(t)
		org, other := newOrg(), newOrg()
		wf := workflows.create(t, s, org, 1)
		const max, n = 3, 8
		ctx := cardflow.WithOpenExecutionLimit(t.Context(), max)
		started := make([]*cardflow.Execution, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				ex := execution(org, wf)
				if errs[i] = s.StartExecution(ctx, ex, process(ex, "PO-"+newID()), nil); errs[i] == nil {
					started[i] = ex
				}
			})
		}
		wg.Wait()
		var open []*cardflow.Execution
		for i, err := range errs {
			if err == nil {
				open = append(open, started[i])
				continue
			}
			wantCode(t, "start past the cap", err, cardflow.ETHROTTLED)
			if d := cardflow.RetryAfterOf(err); d <= 0 {
				t.Errorf("start past the cap: got no Retry-After, want one")
			}
		}
		if len(open) != max {
			t.Fatalf("starts that won: got %d, want %d", len(open), max)
		}

		otherWF := workflows.create(t, s, other, 1)
		ex := execution(other, otherWF)
		mustOK(t, "start in another organization", s.StartExecution(ctx, ex, process(ex, "PO-1"), nil))

		// A step that keeps the execution open frees nothing.
		open[0].Status = cardflow.ExecRunning
		mustOK(t, "put running", s.PutExecution(t.Context(), open[0]))
		ex = execution(org, wf)
		wantCode(t, "start while full", s.StartExecution(ctx, ex, process(ex, "PO-"+newID()), nil), cardflow.ETHROTTLED)

		open[0].Status = cardflow.ExecSucceeded
		mustOK(t, "put succeeded", s.PutExecution(t.Context(), open[0]))
		// Writing an ended execution again frees no second place.
		open[0].ModifiedOn++
		mustOK(t, "put succeeded again", s.PutExecution(t.Context(), open[0]))
		mustOK(t, "start after one ended", s.StartExecution(ctx, ex, process(ex, "PO-"+newID()), nil))
		ex = execution(org, wf)
		wantCode(t, "start while full again", s.StartExecution(ctx, ex, process(ex, "PO-"+newID()), nil), cardflow.ETHROTTLED)

		// Without a cap in the context (a child execution), starts are
		// counted but not refused.
		mustOK(t, "start without a cap", s.StartExecution(t.Context(), ex, process(ex, "PO-"+newID()), nil))
	})

	// An ended execution opened again (a redrive) takes a place again, and
	// gives it back when it ends again: the count neither drifts up nor down.
	t.Run("ReopenedExecutionCounts", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		ctx := cardflow.WithOpenExecutionLimit(t.Context(), 2)
		start := func() error {
			ex := execution(org, wf)
			return s.StartExecution(ctx, ex, process(ex, "PO-"+newID()), nil)
		}
		ex := execution(org, wf)
		mustOK(t, "start", s.StartExecution(ctx, ex, process(ex, "PO-"+newID()), nil))
		mustOK(t, "start second", start())
		ex.Status = cardflow.ExecFailed
		mustOK(t, "put failed", s.PutExecution(t.Context(), ex))
		got, err := s.GetExecution(t.Context(), org, ex.WorkflowID, ex.WorkflowExecutionID)
		mustOK(t, "get failed", err)
		got.Status = cardflow.ExecRunning
		mustOK(t, "put running again", s.PutExecution(t.Context(), got))
		wantCode(t, "start while the reopened one holds a place", start(), cardflow.ETHROTTLED)
		got.Status = cardflow.ExecFailed
		mustOK(t, "put failed again", s.PutExecution(t.Context(), got))
		mustOK(t, "start after it ended again", start())
		wantCode(t, "start while full", start(), cardflow.ETHROTTLED)
	})
	// Opening an ended execution again (a redrive) with a cap in the
	// context is refused as a start is when the organization is at its
	// cap, and writes nothing; with a place free it takes it.
	t.Run("ReopenPastTheCap", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		ctx := cardflow.WithOpenExecutionLimit(t.Context(), 1)
		ended := execution(org, wf)
		mustOK(t, "start", s.StartExecution(ctx, ended, process(ended, "PO-"+newID()), nil))
		ended.Status = cardflow.ExecFailed
		mustOK(t, "put failed", s.PutExecution(t.Context(), ended))
		holder := execution(org, wf)
		mustOK(t, "start another", s.StartExecution(ctx, holder, process(holder, "PO-"+newID()), nil))

		got, err := s.GetExecution(t.Context(), org, ended.WorkflowID, ended.WorkflowExecutionID)
		mustOK(t, "get failed", err)
		got.Status = cardflow.ExecRunning
		err = s.PutExecution(ctx, got)
		wantCode(t, "reopen at the cap", err, cardflow.ETHROTTLED)
		if d := cardflow.RetryAfterOf(err); d <= 0 {
			t.Errorf("reopen at the cap: got no Retry-After, want one")
		}
		stored, err := s.GetExecution(t.Context(), org, ended.WorkflowID, ended.WorkflowExecutionID)
		mustOK(t, "get after the refusal", err)
		if stored.Status != cardflow.ExecFailed || stored.Revision != got.Revision {
			t.Errorf("after the refusal: got %s at revision %d, want FAILED at %d", stored.Status, stored.Revision, got.Revision)
		}

		holder.Status = cardflow.ExecSucceeded
		mustOK(t, "end the other", s.PutExecution(t.Context(), holder))
		stored.Status = cardflow.ExecRunning
		mustOK(t, "reopen with a place free", s.PutExecution(ctx, stored))
		ex := execution(org, wf)
		wantCode(t, "start while the reopened one holds the place", s.StartExecution(ctx, ex, process(ex, "PO-"+newID()), nil), cardflow.ETHROTTLED)
	})
}
