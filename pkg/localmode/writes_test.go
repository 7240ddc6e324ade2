package localmode_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/sample"
)

// writeCounter counts the writes of a store by kind.
type writeCounter struct {
	cardflow.Store
	mu     sync.Mutex
	writes map[string]int
}

func (s *writeCounter) count(kind string) {
	s.mu.Lock()
	s.writes[kind]++
	s.mu.Unlock()
}

func (s *writeCounter) taken() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.writes
	s.writes = map[string]int{}
	return out
}

func (s *writeCounter) StartExecution(ctx context.Context, e *cardflow.Execution, p *cardflow.Process, i *cardflow.Idempotency) error {
	s.count("StartExecution")
	return s.Store.StartExecution(ctx, e, p, i)
}

// StartExecutionWithSample is a start too, the sample in its write.
func (s *writeCounter) StartExecutionWithSample(ctx context.Context, e *cardflow.Execution, p *cardflow.Process, i *cardflow.Idempotency, sc *cardflow.Schema) error {
	s.count("StartExecution")
	return s.Store.StartExecutionWithSample(ctx, e, p, i, sc)
}

func (s *writeCounter) PutExecution(ctx context.Context, e *cardflow.Execution) error {
	s.count("PutExecution")
	return s.Store.PutExecution(ctx, e)
}

func (s *writeCounter) PutProcess(ctx context.Context, p *cardflow.Process) error {
	s.count("PutProcess")
	return s.Store.PutProcess(ctx, p)
}

func (s *writeCounter) PutSchema(ctx context.Context, sc *cardflow.Schema) error {
	s.count("PutSchema")
	return s.Store.PutSchema(ctx, sc)
}

// TestApprovalWrites counts the writes of one approval of the sample
// (trigger with a process id, card sent, resume, end), the path of the
// load test's round trips: the start, the execution stored waiting, the
// wait opened, the resume's claim, and the end with its process record's
// close in one write; the card's delivery goes to the outbox, one more.
// A trigger with the input the schema sample holds writes no sample. The
// counts are the same on both stores: on bbolt each write is one synced
// transaction (grouped with others by the committer), on DynamoDB one
// write request, and the end reads the process record first.
func TestApprovalWrites(t *testing.T) { onEachStore(t, approvalWrites) }

// onEachStore runs test on each store, as internal/storetest's contract runs:
// the embedded store, which is its own outbox, and DynamoDB on DynamoDB
// Local (skipped without it), beside an embedded outbox. A test on
// DynamoDB shares its tables with others, so it uses an organization of
// its own.
func onEachStore(t *testing.T, test func(t *testing.T, open func(t *testing.T, outbox *boltstore.Store) cardflow.Store)) {
	for _, tc := range []struct {
		name string
		open func(t *testing.T, outbox *boltstore.Store) cardflow.Store
	}{
		{"bolt", func(_ *testing.T, outbox *boltstore.Store) cardflow.Store { return outbox }},
		{"dynamodb", func(t *testing.T, _ *boltstore.Store) cardflow.Store { return dynamostoretest.Open(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) { test(t, tc.open) })
	}
}

func approvalWrites(t *testing.T, open func(t *testing.T, outbox *boltstore.Store) cardflow.Store) {
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	store := &writeCounter{Store: open(t, bolt), writes: map[string]int{}}
	st, err := localmode.NewStack(store, bolt, localmode.Config{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	// An organization of its own: the DynamoDB tables are shared.
	org := "org-" + cardflow.NewID(time.Now())
	ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: org, WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "ann",
	})
	ids, err := sample.Load(ctx, st.Service)
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"requester": "ann@example.com", "item": "Workstation", "amount": 4800}`)
	approve := func(i int) {
		t.Helper()
		pid := fmt.Sprintf("PO-%d", i)
		out, err := st.Service.Trigger(ctx, app.TriggerInput{WorkflowID: ids.ApprovalWorkflowID, ProcessID: pid, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		// The resume comes once the wait is open, so that it never
		// races the engine's write that opens it.
		testenv.WaitFor(t, "the wait of "+pid+" to open", func() bool {
			p, err := store.GetProcess(ctx, org, pid)
			return err == nil && p.Wait != nil
		})
		if _, err := st.Service.Resume(ctx, pid, []byte(`{"source": "TEAMS", "decision": "approve"}`)); err != nil {
			t.Fatal(err)
		}
		item, err := st.Service.WaitForExecutionJSON(ctx, app.WaitInput{
			WorkflowID: ids.ApprovalWorkflowID, WorkflowExecutionID: out.ExecutionID, Until: app.UntilFinal, Timeout: app.MaxWait,
		})
		if err != nil {
			t.Fatal(err)
		}
		if ex, err := st.Service.GetExecution(ctx, ids.ApprovalWorkflowID, out.ExecutionID); err != nil || ex.Status != cardflow.ExecSucceeded {
			t.Fatalf("execution %s: got %s, %v (%s), want SUCCEEDED", out.ExecutionID, ex.Status, err, item)
		}
		p, err := store.GetProcess(ctx, org, pid)
		if err != nil || !p.Closed {
			t.Fatalf("process %s after the end: got %+v, %v, want it closed", pid, p, err)
		}
	}
	approve(0) // records the sample
	store.taken()
	delivered := func() int {
		t.Helper()
		ds, _, err := bolt.ListDeliveries(ctx, org, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		return len(ds)
	}
	before := delivered()
	const n = 5
	for i := range n {
		approve(1 + i)
	}
	got := store.taken()
	if got := delivered() - before; got != n {
		t.Errorf("deliveries in %d approvals: got %d, want %d", n, got, n)
	}
	want := map[string]int{"StartExecution": n, "PutExecution": 2 * n, "PutProcess": 2 * n}
	for kind, w := range want {
		if got[kind] != w {
			t.Errorf("%s in %d approvals: got %d, want %d", kind, n, got[kind], w)
		}
	}
	for kind, g := range got {
		if _, ok := want[kind]; !ok {
			t.Errorf("%s in %d approvals: got %d, want none", kind, n, g)
		}
	}
}
