package storetest

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// deep returns a value nested n arrays deep. Stored 10,000 deep, it lies
// deeper in its record than JSON decoders read: the record is written, but
// reading it fails, as it did for step outputs and resumes taken before
// their nesting was limited. An execution's input cannot be planted so: the
// bbolt store encodes the execution as the API shows it, which Go's encoder
// refuses past the decoder's depth.
func deep(n int) any {
	var v any = "bottom"
	for range n {
		v = []any{v}
	}
	return v
}

// unreadable checks that err reports a record that does not decode and
// returns it.
func unreadable(t *testing.T, what string, err error) *cardflow.UnreadableError {
	t.Helper()
	var ue *cardflow.UnreadableError
	if !errors.Is(err, cardflow.ErrUnreadable) || !errors.As(err, &ue) {
		t.Fatalf("%s: got %v, want an UnreadableError", what, err)
	}
	return ue
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	mustOK(t, "marshal", err)
	return string(b)
}

func testUnreadable(t *testing.T, e env) {
	s := e.store(t)
	org := newOrg()
	wf := workflows.create(t, s, org, 1)
	ctx := t.Context()

	// A step output 10,000 levels deep makes the record unreadable. The
	// input, 1,000 levels deep, reads on its own, and the head keeps it
	// whole: only what does not decode is cut.
	t.Run("Execution", func(t *testing.T) {
		ex := execution(org, wf)
		ex.Status = cardflow.ExecRunning
		ex.WorkflowInputPayload = map[string]any{"items": deep(1_000)}
		ex.State = cardflow.ExecutionState{StepID: "start", ProcessID: "PO-deep", Outputs: map[string]any{"start": deep(10_000)}}
		mustOK(t, "start an execution whose step output nests too deep", s.StartExecution(ctx, ex, process(ex, "PO-deep"), nil))

		ue := unreadable(t, "get", errOf(s.GetExecution(ctx, org, wf, ex.WorkflowExecutionID)))
		_ = unreadable(t, "get head", errOf(s.GetExecutionHead(ctx, org, wf, ex.WorkflowExecutionID)))
		head := ue.Head
		if head == nil {
			t.Fatal("got no head, want the execution less what lies too deep")
		}
		if head.WorkflowExecutionID != ex.WorkflowExecutionID || head.WorkflowID != wf || head.OrganizationID != org ||
			head.Revision != 1 || head.Status != cardflow.ExecRunning || head.State.ProcessID != "PO-deep" ||
			head.WorkflowDetails.WorkflowName != ex.WorkflowDetails.WorkflowName || head.CreatedOn != ex.CreatedOn {
			t.Errorf("head: got %s %s %s revision %d %s process %q %q created %d, want the execution's",
				head.WorkflowExecutionID, head.WorkflowID, head.OrganizationID, head.Revision, head.Status,
				head.State.ProcessID, head.WorkflowDetails.WorkflowName, head.CreatedOn)
		}
		if got := cardflow.Nesting([]byte(jsonOf(t, head.WorkflowInputPayload))); got != 1_001 {
			t.Errorf("head's input: got %d levels, want the 1,001 it has", got)
		}
		// Where the state lies in the record is the store's business; the
		// output is cut short of the depth pruning keeps, whatever it is.
		if got := cardflow.Nesting([]byte(jsonOf(t, head.State.Outputs["start"]))); got == 0 || got > 255 {
			t.Errorf("head's step output: got %d levels, want it cut short of 256", got)
		}

		// Writing the head back, FAILED, makes the record readable again.
		failed, err := cardflow.FailUnreadable(ctx, s, ex.Ref(), time.Now())
		mustOK(t, "fail the unreadable execution", err)
		got, err := s.GetExecution(ctx, org, wf, ex.WorkflowExecutionID)
		mustOK(t, "get the failed execution", err)
		if got.Status != cardflow.ExecFailed || got.Revision != 2 || failed.Revision != 2 {
			t.Errorf("failed execution: got %s revision %d (returned %d), want FAILED revision 2", got.Status, got.Revision, failed.Revision)
		}
		events := got.WorkflowEventLog.Events
		if last := events[len(events)-1]; last.Type != cardflow.EventFailed || !strings.Contains(last.Message, "cannot be read") {
			t.Errorf("last event: got %+v, want ExecutionFailed saying the record cannot be read", last)
		}
		if p, err := s.GetProcess(ctx, org, "PO-deep"); err != nil || !p.Closed {
			t.Errorf("process record: got %+v, %v, want it closed", p, err)
		}
		again, err := cardflow.FailUnreadable(ctx, s, ex.Ref(), time.Now())
		if err != nil || again.Revision != 2 {
			t.Errorf("fail again: got revision %d, %v, want the failed execution as it was", again.Revision, err)
		}
	})

	t.Run("ProcessRecord", func(t *testing.T) {
		ex := execution(org, wf)
		ex.State = cardflow.ExecutionState{StepID: "approve", Phase: cardflow.PhaseWaiting, ProcessID: "PO-resumed", Wait: 1}
		p := process(ex, "PO-resumed")
		mustOK(t, "start", s.StartExecution(ctx, ex, p, nil))
		p.Waits = 1
		p.Wait = &cardflow.Wait{Seq: 1, StepID: "approve", OpenedOn: 1,
			Resume: &cardflow.Resume{Source: cardflow.SourceSAP, Payload: map[string]any{"items": deep(10_000)}, Actor: "sap", ReceivedOn: 2}}
		mustOK(t, "resume with an answer nested too deep", s.PutProcess(ctx, p))
		if ue := unreadable(t, "get process", errOf(s.GetProcess(ctx, org, "PO-resumed"))); ue.Head != nil {
			t.Errorf("process record: got a head, want none")
		}
		// The execution is readable; it ends, and its process record stays.
		failed, err := cardflow.FailUnreadable(ctx, s, ex.Ref(), time.Now())
		mustOK(t, "fail the execution", err)
		if failed.Status != cardflow.ExecFailed || !strings.Contains(jsonOf(t, failed.WorkflowOutputPayload), "a record it needs cannot be read") {
			t.Errorf("execution: got %s %s, want FAILED saying a record cannot be read", failed.Status, jsonOf(t, failed.WorkflowOutputPayload))
		}
	})
}

// testUnreadableHousekeeping checks that housekeeping lists leave
// unreadable records out and give the rest, however many the limit allows.
// Its due times lie before every other test's, so its lists with a limit of
// one see its own records first; testHousekeeping runs it after its own
// lists of limit one, which its records would otherwise come before where
// stores share tables (DynamoDB).
func testUnreadableHousekeeping(t *testing.T, s cardflow.Store, org, wf string) {
	ctx := t.Context()
	start := func(pid string, change func(p *cardflow.Process)) *cardflow.Process {
		t.Helper()
		ex := execution(org, wf)
		p := process(ex, pid)
		mustOK(t, "start "+pid, s.StartExecution(ctx, ex, p, nil))
		change(p)
		mustOK(t, "put process "+pid, s.PutProcess(ctx, p))
		return p
	}
	early := func(at int64, payload any) *cardflow.Resume {
		return &cardflow.Resume{Source: cardflow.SourceSAP, Payload: payload, Actor: "sap", ReceivedOn: at}
	}
	start("wait-unreadable", func(p *cardflow.Process) {
		p.Wait = &cardflow.Wait{Seq: 1, StepID: "approve", OpenedOn: 1, Deadline: 600}
		p.Early = early(600, deep(10_000))
	})
	waitReadable := start("wait-readable", func(p *cardflow.Process) {
		p.Wait = &cardflow.Wait{Seq: 1, StepID: "approve", OpenedOn: 1, Deadline: 700}
	})
	start("early-unreadable", func(p *cardflow.Process) { p.Early = early(600, deep(10_000)) })
	earlyReadable := start("early-readable", func(p *cardflow.Process) { p.Early = early(700, map[string]any{"ok": true}) })

	waits, err := s.ListOverdueWaits(ctx, 800, 1)
	mustOK(t, "list overdue waits", err)
	if got, want := processIDs(waits, org), []string{"wait-readable"}; !slices.Equal(got, want) {
		t.Errorf("overdue waits, limit 1: got %v, want %v", got, want)
	}
	resumes, err := s.ListStaleEarlyResumes(ctx, 800, 1)
	mustOK(t, "list stale early resumes", err)
	if got, want := processIDs(resumes, org), []string{"early-readable"}; !slices.Equal(got, want) {
		t.Errorf("stale early resumes, limit 1: got %v, want %v", got, want)
	}
	// Where stores share tables across tests (DynamoDB), the readable
	// records would stay due before every other test's; settle them.
	waitReadable.Wait.TimedOut = true
	mustOK(t, "time the readable wait out", s.PutProcess(ctx, waitReadable))
	earlyReadable.Early = nil
	mustOK(t, "drop the readable early resume", s.PutProcess(ctx, earlyReadable))
}
