package storetest

import (
	"slices"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Housekeeping lists span organizations and the suite's stores may share a
// backend, so these tests use due times near the epoch that no other test
// uses, and look only at their own organization's records.

func processIDs(ps []*cardflow.Process, org string) []string {
	ids := []string{}
	for _, p := range ps {
		if p.OrganizationID == org {
			ids = append(ids, p.ProcessID)
		}
	}
	return ids
}

func testHousekeeping(t *testing.T, e env) {
	s := e.store(t)
	org := newOrg()
	wf := workflows.create(t, s, org, 1)
	// start starts an execution with process id pid and gives its process
	// record what change sets.
	start := func(pid string, change func(p *cardflow.Process)) *cardflow.Process {
		t.Helper()
		ex := execution(org, wf)
		p := process(ex, pid)
		mustOK(t, "start "+pid, s.StartExecution(t.Context(), ex, p, nil))
		change(p)
		mustOK(t, "put process "+pid, s.PutProcess(t.Context(), p))
		return p
	}
	wait := func(deadline int64) *cardflow.Wait {
		return &cardflow.Wait{Seq: 1, StepID: "approve", OpenedOn: 1, Deadline: deadline}
	}
	early := &cardflow.Resume{Source: cardflow.SourceSAP, Payload: map[string]any{"ok": true}, Actor: "sap", ReceivedOn: 1200}
	start("overdue-2", func(p *cardflow.Process) { p.Wait = wait(2000) })
	overdue1 := start("overdue-1", func(p *cardflow.Process) { p.Wait = wait(1000) })
	start("claimed", func(p *cardflow.Process) {
		p.Wait = wait(1500)
		p.Wait.Resume = early
	})
	start("no-deadline", func(p *cardflow.Process) { p.Wait = wait(0) })
	start("not-yet", func(p *cardflow.Process) { p.Wait = wait(5000) })
	stale := start("early-stale", func(p *cardflow.Process) { p.Early = early })
	start("early-fresh", func(p *cardflow.Process) {
		fresh := *early
		fresh.ReceivedOn = 4000
		p.Early = &fresh
	})
	start("closed-expired", func(p *cardflow.Process) { p.Closed, p.ExpiresAt, p.Wait = true, 2, wait(1000) })
	start("closed-later", func(p *cardflow.Process) { p.Closed, p.ExpiresAt = true, 10 })
	start("closed-taken-over", func(p *cardflow.Process) { p.Closed, p.ExpiresAt = true, 1 })
	// A new execution takes the last one's process id over.
	next := execution(org, wf)
	mustOK(t, "take over a closed process id", s.StartExecution(t.Context(), next, process(next, "closed-taken-over"), nil))

	t.Run("OverdueWaits", func(t *testing.T) {
		got, err := s.ListOverdueWaits(t.Context(), 3000, 10)
		mustOK(t, "list overdue waits", err)
		if ids, want := processIDs(got, org), []string{"overdue-1", "overdue-2"}; !slices.Equal(ids, want) {
			t.Errorf("overdue waits at 3000: got %v, want %v", ids, want)
		}
		sameJSON(t, "overdue wait record", got[0], overdue1)
		got, err = s.ListOverdueWaits(t.Context(), 3000, 1)
		mustOK(t, "list one overdue wait", err)
		if ids := processIDs(got, org); len(got) != 1 || !slices.Equal(ids, []string{"overdue-1"}) {
			t.Errorf("overdue waits at 3000, limit 1: got %v, want [overdue-1]", ids)
		}
		// A wait claimed by its deadline is overdue no more.
		overdue1.Wait.TimedOut = true
		mustOK(t, "time the wait out", s.PutProcess(t.Context(), overdue1))
		got, err = s.ListOverdueWaits(t.Context(), 3000, 10)
		mustOK(t, "list overdue waits", err)
		if ids, want := processIDs(got, org), []string{"overdue-2"}; !slices.Equal(ids, want) {
			t.Errorf("overdue waits after a timeout: got %v, want %v", ids, want)
		}
	})

	t.Run("StaleEarlyResumes", func(t *testing.T) {
		got, err := s.ListStaleEarlyResumes(t.Context(), 3000, 10)
		mustOK(t, "list stale early resumes", err)
		if ids, want := processIDs(got, org), []string{"early-stale"}; !slices.Equal(ids, want) {
			t.Errorf("early resumes received by 3000: got %v, want %v", ids, want)
		}
		stale.Early = nil
		mustOK(t, "drop the early resume", s.PutProcess(t.Context(), stale))
		got, err = s.ListStaleEarlyResumes(t.Context(), 3000, 10)
		mustOK(t, "list stale early resumes", err)
		if ids := processIDs(got, org); len(ids) != 0 {
			t.Errorf("early resumes after dropping: got %v, want none", ids)
		}
	})

	t.Run("ExpiredProcesses", func(t *testing.T) {
		n, err := s.DeleteExpiredProcesses(t.Context(), 3000, 10)
		mustOK(t, "delete expired processes", err)
		if n != 1 {
			t.Errorf("deleted: got %d, want 1", n)
		}
		wantCode(t, "expired closed process", errOf(s.GetProcess(t.Context(), org, "closed-expired")), cardflow.ENOTFOUND)
		for _, pid := range []string{"closed-later", "closed-taken-over", "overdue-2"} {
			_, err := s.GetProcess(t.Context(), org, pid)
			mustOK(t, "get "+pid+" after deleting expired ones", err)
		}
		n, err = s.DeleteExpiredProcesses(t.Context(), 3000, 10)
		mustOK(t, "delete expired processes again", err)
		if n != 0 {
			t.Errorf("deleted again: got %d, want 0", n)
		}
	})

	t.Run("ExpiredIdempotency", func(t *testing.T) {
		for i, expires := range []int64{2, 3, 1_000_000} {
			ex := execution(org, wf)
			idem := idempotency(ex, "idem-"+string(rune('a'+i)))
			idem.ExpiresAt = expires
			mustOK(t, "start with a key", s.StartExecution(t.Context(), ex, process(ex, ex.WorkflowExecutionID), idem))
		}
		n, err := s.DeleteExpiredIdempotency(t.Context(), 3000, 1)
		mustOK(t, "delete one expired key", err)
		if n != 1 {
			t.Errorf("deleted with limit 1: got %d, want 1", n)
		}
		n, err = s.DeleteExpiredIdempotency(t.Context(), 3000, 10)
		mustOK(t, "delete expired keys", err)
		if n != 1 {
			t.Errorf("deleted: got %d, want 1", n)
		}
		// Gone for good: not even a reader from before the expiry sees them.
		wantCode(t, "expired key", errOf(s.GetIdempotency(t.Context(), org, "idem-a", 0)), cardflow.ENOTFOUND)
		wantCode(t, "expired key", errOf(s.GetIdempotency(t.Context(), org, "idem-b", 0)), cardflow.ENOTFOUND)
		_, err = s.GetIdempotency(t.Context(), org, "idem-c", 3000)
		mustOK(t, "get the key that has not expired", err)
	})

	t.Run("Unreadable", func(t *testing.T) { testUnreadableHousekeeping(t, s, org, wf) })
}
