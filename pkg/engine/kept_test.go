package engine_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
)

// readCount is a store counting whole reads of executions.
type readCount struct {
	cardflow.Store
	reads atomic.Int64
}

func (s *readCount) GetExecution(ctx context.Context, org, workflowID, executionID string) (*cardflow.Execution, error) {
	s.reads.Add(1)
	return s.Store.GetExecution(ctx, org, workflowID, executionID)
}

// The engine keeps the execution it last stored, and reads it whole again
// only when another writer changed it since: a cancel in the wait is seen
// by the next Advance, which writes nothing that would fail on the
// revision; a resume changes the process record alone.
func TestKeptExecutionIsCheckedByRevision(t *testing.T) {
	onEachStore(t, testKeptExecutionIsCheckedByRevision)
}

func testKeptExecutionIsCheckedByRevision(t *testing.T, b backend) {
	for _, tc := range []struct {
		name       string
		keep       int
		handed     bool // the execution is handed over as started
		cancel     bool
		wantStatus string
		wantReads  int64
	}{
		{"resumed", engine.DefaultKeptBytes, false, false, cardflow.ExecSucceeded, 1},
		{"handed over as started", engine.DefaultKeptBytes, true, false, cardflow.ExecSucceeded, 0},
		{"cancelled meanwhile", engine.DefaultKeptBytes, false, true, cardflow.ExecCancelled, 2},
		{"handed over, then cancelled", engine.DefaultKeptBytes, true, true, cardflow.ExecCancelled, 1},
		{"nothing kept", 0, true, false, cardflow.ExecSucceeded, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, b)
			env, err := expr.NewEnv()
			if err != nil {
				t.Fatal(err)
			}
			store := &readCount{Store: f.store}
			if f.eng, err = engine.New(store, f.outbox, env, engine.WithClock(f.clock.now), engine.WithKeptBytes(tc.keep)); err != nil {
				t.Fatal(err)
			}
			steps, conns := approvalDefinition(false)
			f.card(steps)
			ref := f.start(steps, conns, obj{"amount": 1200}, nil)
			if tc.handed {
				f.eng.Keep(f.get(ref))
			}
			if res := f.advance(ref); res.Status != cardflow.ExecWaiting {
				t.Fatalf("first Advance: got %+v, want WAITING", res)
			}
			if res := f.advance(ref); res.Status != cardflow.ExecWaiting {
				t.Fatalf("second Advance: got %+v, want WAITING", res)
			}
			if tc.cancel {
				ex := f.get(ref)
				ex.Status, ex.ModifiedOn = cardflow.ExecCancelled, ex.ModifiedOn+1
				if err := f.store.PutExecution(context.Background(), ex); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.cancel {
				f.resume(ref, obj{"decision": "approve"})
			}
			if res := f.advance(ref); res.Status != tc.wantStatus {
				t.Fatalf("third Advance: got %+v, want %s", res, tc.wantStatus)
			}
			if got := f.get(ref).Status; got != tc.wantStatus {
				t.Errorf("stored: got %s, want %s", got, tc.wantStatus)
			}
			if got := store.reads.Load(); got != tc.wantReads {
				t.Errorf("got %d whole reads in three Advance calls, want %d", got, tc.wantReads)
			}
		})
	}
}
