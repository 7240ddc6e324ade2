package storetest

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func process(e *cardflow.Execution, id string) *cardflow.Process {
	return &cardflow.Process{
		OrganizationID: e.OrganizationID, ProcessID: id,
		WorkflowID: e.WorkflowID, ExecutionID: e.WorkflowExecutionID, CreatedOn: e.CreatedOn,
	}
}

func idempotency(e *cardflow.Execution, key string) *cardflow.Idempotency {
	return &cardflow.Idempotency{
		OrganizationID: e.OrganizationID, Key: key, RequestHash: "hash-1",
		WorkflowID: e.WorkflowID, ExecutionID: e.WorkflowExecutionID,
		CreatedOn: e.CreatedOn, ExpiresAt: e.CreatedOn/1000 + 86400,
	}
}

func testEngine(t *testing.T, e env) {
	t.Run("StartExecution", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		ex := execution(org, wf)
		ex.State = cardflow.ExecutionState{StepID: "approve", Phase: cardflow.PhaseWaiting, ProcessID: "PO-1",
			Outputs: map[string]any{"start": map[string]any{"amount": 1200.5}}, WakeAt: 1700000100000, StepsRun: 2}
		p := process(ex, "PO-1")
		mustOK(t, "start", s.StartExecution(t.Context(), ex, p, idempotency(ex, "key-1")))
		if ex.Revision != 1 || p.Revision != 1 {
			t.Errorf("revisions after start: got %d, %d, want 1, 1", ex.Revision, p.Revision)
		}
		got, err := s.GetExecution(t.Context(), org, wf, ex.WorkflowExecutionID)
		mustOK(t, "get", err)
		sameJSON(t, "execution", got, ex)
		sameJSON(t, "state", got.State, ex.State)
		if got.Revision != 1 {
			t.Errorf("stored revision: got %d, want 1", got.Revision)
		}
		gotP, err := s.GetProcess(t.Context(), org, "PO-1")
		mustOK(t, "get process", err)
		sameJSON(t, "process", gotP, p)
		gotI, err := s.GetIdempotency(t.Context(), org, "key-1", ex.CreatedOn)
		mustOK(t, "get idempotency", err)
		sameJSON(t, "idempotency", gotI, idempotency(ex, "key-1"))

		// The same process id or key again conflicts and writes nothing.
		other := execution(org, wf)
		wantCode(t, "start with an open process id", s.StartExecution(t.Context(), other, process(other, "PO-1"), nil), cardflow.ECONFLICT)
		wantCode(t, "start with a used key", s.StartExecution(t.Context(), other, process(other, "PO-2"), idempotency(other, "key-1")), cardflow.ECONFLICT)
		wantCode(t, "execution of a failed start", errOf(s.GetExecution(t.Context(), org, wf, other.WorkflowExecutionID)), cardflow.ENOTFOUND)
		wantCode(t, "process of a failed start", errOf(s.GetProcess(t.Context(), org, "PO-2")), cardflow.ENOTFOUND)
		wantCode(t, "idempotency of another organization", errOf(s.GetIdempotency(t.Context(), newOrg(), "key-1", ex.CreatedOn)), cardflow.ENOTFOUND)
		wantCode(t, "process of another organization", errOf(s.GetProcess(t.Context(), newOrg(), "PO-1")), cardflow.ENOTFOUND)

		// A closed process id can be used again; an expired key too.
		gotP.Closed = true
		mustOK(t, "close process", s.PutProcess(t.Context(), gotP))
		later := execution(org, wf)
		later.CreatedOn = ex.CreatedOn + 86400*1000
		wantCode(t, "expired idempotency", errOf(s.GetIdempotency(t.Context(), org, "key-1", later.CreatedOn)), cardflow.ENOTFOUND)
		mustOK(t, "start with a closed process id and an expired key", s.StartExecution(t.Context(), later, process(later, "PO-1"), idempotency(later, "key-1")))
		gotP, err = s.GetProcess(t.Context(), org, "PO-1")
		mustOK(t, "get reused process", err)
		if gotP.ExecutionID != later.WorkflowExecutionID || gotP.Closed {
			t.Errorf("reused process: got execution %s closed %v, want %s open", gotP.ExecutionID, gotP.Closed, later.WorkflowExecutionID)
		}
	})

	t.Run("ConcurrentStartsWithOneProcessID", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				ex := execution(org, wf)
				errs[i] = s.StartExecution(t.Context(), ex, process(ex, "shared"), nil)
			})
		}
		wg.Wait()
		started := 0
		for _, err := range errs {
			if err == nil {
				started++
			} else {
				wantCode(t, "losing start", err, cardflow.ECONFLICT)
			}
		}
		if started != 1 {
			t.Errorf("starts that won: got %d, want 1", started)
		}
	})

	t.Run("Revisions", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		ex := execution(org, wf)
		p := process(ex, ex.WorkflowExecutionID)
		mustOK(t, "start", s.StartExecution(t.Context(), ex, p, nil))

		stale := *ex
		ex.State.StepID = "next"
		mustOK(t, "put", s.PutExecution(t.Context(), ex))
		if ex.Revision != 2 {
			t.Errorf("revision after put: got %d, want 2", ex.Revision)
		}
		stale.Status = cardflow.ExecCancelled
		wantCode(t, "put of a stale execution", s.PutExecution(t.Context(), &stale), cardflow.ECONFLICT)
		got, err := s.GetExecution(t.Context(), org, wf, ex.WorkflowExecutionID)
		mustOK(t, "get", err)
		if got.State.StepID != "next" || got.Status != ex.Status {
			t.Errorf("after a stale put: got step %q status %s, want next %s", got.State.StepID, got.Status, ex.Status)
		}

		staleP := *p
		p.Wait = &cardflow.Wait{Seq: 1, StepID: "approve", OpenedOn: 1700000001000, Deadline: 1700000900000, Token: "token-1"}
		p.Waits = 1
		mustOK(t, "put process", s.PutProcess(t.Context(), p))
		staleP.Early = &cardflow.Resume{Source: cardflow.SourceTeams, Payload: map[string]any{"ok": true}, Actor: "ann", ReceivedOn: 1700000002000}
		wantCode(t, "put of a stale process", s.PutProcess(t.Context(), &staleP), cardflow.ECONFLICT)
		gotP, err := s.GetProcess(t.Context(), org, p.ProcessID)
		mustOK(t, "get process", err)
		sameJSON(t, "process after a stale put", gotP, p)

		missing := process(ex, "never-started")
		wantCode(t, "put of a missing process", s.PutProcess(t.Context(), missing), cardflow.ENOTFOUND)
	})

	t.Run("OpenExecutions", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		var open, done []*cardflow.Execution
		for i := range 4 {
			ex := execution(org, wf)
			ex.Status = []string{cardflow.ExecRunning, cardflow.ExecWaiting, cardflow.ExecSucceeded, cardflow.ExecRunning}[i]
			mustOK(t, "start", s.StartExecution(t.Context(), ex, process(ex, ex.WorkflowExecutionID), nil))
			if ex.Open() {
				open = append(open, ex)
			} else {
				done = append(done, ex)
			}
		}
		// One finishes later.
		open[2].Status = cardflow.ExecFailed
		mustOK(t, "finish", s.PutExecution(t.Context(), open[2]))
		done, open = append(done, open[2]), open[:2]

		refs, err := s.ListOpenExecutions(t.Context())
		mustOK(t, "list open", err)
		for _, ex := range open {
			if !slices.Contains(refs, ex.Ref()) {
				t.Errorf("open execution %s missing from ListOpenExecutions", ex.WorkflowExecutionID)
			}
		}
		for _, ex := range done {
			if slices.Contains(refs, ex.Ref()) {
				t.Errorf("%s execution %s listed as open", ex.Status, ex.WorkflowExecutionID)
			}
		}
	})

	t.Run("EndClosesProcess", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		start := func(pid string) (*cardflow.Execution, *cardflow.Process) {
			ex := execution(org, wf)
			ex.State.ProcessID = pid
			p := process(ex, pid)
			mustOK(t, "start", s.StartExecution(t.Context(), ex, p, nil))
			return ex, p
		}
		ex, p := start("PO-1")
		ex.Status = cardflow.ExecWaiting
		mustOK(t, "put open", s.PutExecution(t.Context(), ex))
		p.Wait, p.Waits = &cardflow.Wait{Seq: 1, StepID: "approve", OpenedOn: ex.ModifiedOn, Deadline: ex.ModifiedOn + 1000}, 1
		mustOK(t, "open the wait", s.PutProcess(t.Context(), p))
		gotP, err := s.GetProcess(t.Context(), org, "PO-1")
		mustOK(t, "get process", err)
		sameJSON(t, "process of an open execution", gotP, p)

		ex.Status, ex.ModifiedOn = cardflow.ExecSucceeded, ex.ModifiedOn+5000
		mustOK(t, "end", s.PutExecution(t.Context(), ex))
		gotP, err = s.GetProcess(t.Context(), org, "PO-1")
		mustOK(t, "get process", err)
		want := *p
		want.Closed, want.ExpiresAt, want.Revision = true, ex.ModifiedOn/1000+int64(cardflow.ClosedProcessTTL/time.Second), p.Revision+1
		sameJSON(t, "process of an ended execution", gotP, &want)
		due, err := s.ListOverdueWaits(t.Context(), p.Wait.Deadline+1, 100)
		mustOK(t, "overdue waits", err)
		for _, d := range due {
			if d.ProcessID == "PO-1" && d.OrganizationID == org {
				t.Errorf("the closed process's wait is listed as overdue")
			}
		}

		// A record another execution took over stays as it is.
		other, otherP := start("PO-2")
		ex2, _ := start("PO-3")
		otherP.ExecutionID = ex2.WorkflowExecutionID
		mustOK(t, "take over", s.PutProcess(t.Context(), otherP))
		other.Status = cardflow.ExecFailed
		mustOK(t, "end the other", s.PutExecution(t.Context(), other))
		gotP, err = s.GetProcess(t.Context(), org, "PO-2")
		mustOK(t, "get process", err)
		sameJSON(t, "process taken over", gotP, otherP)
	})

	t.Run("StartWithSample", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 1)
		ex := execution(org, wf)
		want := schema(org, wf, 1)
		mustOK(t, "start with a sample", s.StartExecutionWithSample(t.Context(), ex, process(ex, "PO-1"), nil, want))
		got, err := s.GetSchema(t.Context(), org, wf, 1)
		mustOK(t, "get sample", err)
		sameSchema(t, "sample written with the start", got, want)
		if ex.Revision != 1 {
			t.Errorf("revision after start: got %d, want 1", ex.Revision)
		}

		// A start that fails writes no sample.
		other := execution(org, wf)
		changed := schema(org, wf, 1)
		changed.WorkflowMockPayload = map[string]any{"changed": true}
		wantCode(t, "start with an open process id", s.StartExecutionWithSample(t.Context(), other, process(other, "PO-1"), nil, changed), cardflow.ECONFLICT)
		got, err = s.GetSchema(t.Context(), org, wf, 1)
		mustOK(t, "get sample", err)
		sameSchema(t, "sample after a failed start", got, want)

		// A sample PutSchema refuses is left out; the start goes on.
		third := execution(org, wf)
		mustOK(t, "start with a sample without a version", s.StartExecutionWithSample(t.Context(), third, process(third, "PO-3"), nil, schema(org, wf, 0)))
		mustOK(t, "get the started execution", errOf(s.GetExecution(t.Context(), org, wf, third.WorkflowExecutionID)))
	})

	t.Run("Schedules", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		wf := workflows.create(t, s, org, 2)
		sc := func(version int, state string) *cardflow.Schedule {
			return &cardflow.Schedule{OrganizationID: org, WorkspaceID: "ws-1", WorkflowID: wf, WorkflowVersion: version,
				Expression: "cron(0 8 ? * MON-FRI *)", Timezone: "Europe/Berlin", State: state, CreatedOn: 1700000000000, ModifiedOn: 1700000000000}
		}
		wantCode(t, "get before put", errOf(s.GetSchedule(t.Context(), org, wf, 1)), cardflow.ENOTFOUND)
		mustOK(t, "put v1", s.PutSchedule(t.Context(), sc(1, cardflow.ScheduleActive)))
		mustOK(t, "put v2", s.PutSchedule(t.Context(), sc(2, cardflow.ScheduleActive)))
		mustOK(t, "pause v2", s.PutSchedule(t.Context(), sc(2, cardflow.SchedulePaused)))
		got, err := s.GetSchedule(t.Context(), org, wf, 2)
		mustOK(t, "get v2", err)
		sameJSON(t, "v2", got, sc(2, cardflow.SchedulePaused))
		wantCode(t, "get of another organization", errOf(s.GetSchedule(t.Context(), newOrg(), wf, 2)), cardflow.ENOTFOUND)

		list, err := s.ListWorkflowSchedules(t.Context(), org, wf)
		mustOK(t, "list", err)
		sameJSON(t, "workflow schedules", list, []*cardflow.Schedule{sc(2, cardflow.SchedulePaused), sc(1, cardflow.ScheduleActive)})

		mustOK(t, "delete v1", s.DeleteSchedule(t.Context(), org, wf, 1))
		mustOK(t, "delete v1 again", s.DeleteSchedule(t.Context(), org, wf, 1))
		all, err := s.ListSchedules(t.Context())
		mustOK(t, "list all", err)
		var mine []*cardflow.Schedule
		for _, x := range all {
			if x.OrganizationID == org {
				mine = append(mine, x)
			}
		}
		sameJSON(t, "all schedules of the organization", mine, []*cardflow.Schedule{sc(2, cardflow.SchedulePaused)})
	})
}

// errOf drops a result, keeping the error.
func errOf[T any](_ T, err error) error { return err }

func testLatestWorkflow(t *testing.T, e env) {
	s := e.store(t)
	org := newOrg()
	id := workflows.create(t, s, org, 3)
	latest := func() int {
		t.Helper()
		w, err := s.GetLatestWorkflow(t.Context(), org, id)
		mustOK(t, "get latest", err)
		return w.WorkflowVersion
	}
	if got := latest(); got != 1 {
		t.Errorf("latest before publishing: got %d, want 1", got)
	}
	for _, v := range []int{3, 2} {
		_, err := s.PublishWorkflow(t.Context(), org, id, v, "bob", 1800000000000)
		mustOK(t, "publish", err)
		if got := latest(); got != v {
			t.Errorf("latest after publishing %d: got %d, want %d", v, got, v)
		}
	}
	wantCode(t, "latest of another organization", errOf(s.GetLatestWorkflow(t.Context(), newOrg(), id)), cardflow.ENOTFOUND)
	wantCode(t, "latest of an unknown workflow", errOf(s.GetLatestWorkflow(t.Context(), org, newID())), cardflow.ENOTFOUND)
}
