package engine_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
)

// writeLog is a store that notes the step and status of every execution
// it writes.
type writeLog struct {
	cardflow.Store
	mu     sync.Mutex
	writes []string
}

func (s *writeLog) PutExecution(ctx context.Context, e *cardflow.Execution) error {
	s.mu.Lock()
	s.writes = append(s.writes, e.Status+" "+e.State.StepID+" "+e.State.Phase)
	s.mu.Unlock()
	return s.Store.PutExecution(ctx, e)
}

// withWriteLog gives f an engine whose writes are noted.
func withWriteLog(t *testing.T, f *fixture, opts ...engine.Option) *writeLog {
	t.Helper()
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	log := &writeLog{Store: f.store}
	if f.eng, err = engine.New(log, f.outbox, env, append([]engine.Option{engine.WithClock(f.clock.now)}, opts...)...); err != nil {
		t.Fatal(err)
	}
	return log
}

// Local steps are stored together with the write that follows them; a
// step that is not local (http) finds every step before it stored, and
// the end is stored with the local steps before it, in the write that
// closes the process record too.
func TestLocalStepsStoredTogether(t *testing.T) { onEachStore(t, testLocalStepsStoredTogether) }

func testLocalStepsStoredTogether(t *testing.T, b backend) {
	var storedAtCall []string
	var f *fixture
	var ref cardflow.ExecutionRef
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		storedAtCall = eventTypes(f.get(ref))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok": true}`))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		steps  []cardflow.Step
		writes []string
		atCall []string // events stored when the http step calls
	}{
		{
			name: "to a card",
			steps: []cardflow.Step{
				step("start", "trigger", obj{"kind": "REQUEST"}),
				step("a", "transform", obj{"output": "{{ input.n + 1 }}"}),
				step("b", "transform", obj{"output": "{{ steps.a.output + 1 }}"}),
				step("ask", "card", obj{"card_id": "CARD", "data": obj{"n": "{{ steps.b.output }}"}, "timeout": "PT1H"}),
				step("done", "end", obj{"status": "SUCCEEDED"}),
			},
			writes: []string{"WAITING ask waiting"},
		},
		{
			name: "through an http step to the end",
			steps: []cardflow.Step{
				step("start", "trigger", obj{"kind": "REQUEST"}),
				step("a", "transform", obj{"output": "{{ input.n + 1 }}"}),
				step("call", "http", obj{"method": "GET", "url": srv.URL + "/x"}),
				step("b", "transform", obj{"output": "{{ steps.a.output + 1 }}"}),
				step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.b.output }}"}),
			},
			writes: []string{"RUNNING call ", "SUCCEEDED  "},
			atCall: []string{"StepStarted:start", "StepFinished:start", "StepStarted:a", "StepFinished:a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f = newFixture(t, b, allowLoopback(t))
			log := withWriteLog(t, f, allowLoopback(t))
			var conns []cardflow.Connection
			for i := 1; i < len(tc.steps); i++ {
				conns = append(conns, cardflow.Connection{From: tc.steps[i-1].ID, To: tc.steps[i].ID})
			}
			if tc.steps[3].Type == "card" {
				f.card(tc.steps)
			}
			storedAtCall = nil
			ref = f.start(tc.steps, conns, obj{"n": 1}, nil)
			f.advance(ref)
			if !slices.Equal(log.writes, tc.writes) {
				t.Errorf("writes: got %q, want %q", log.writes, tc.writes)
			}
			if !slices.Equal(storedAtCall, tc.atCall) {
				t.Errorf("stored when the http step called: got %q, want %q", storedAtCall, tc.atCall)
			}
			ex := f.get(ref)
			for _, s := range tc.steps[1:3] {
				if _, ok := ex.State.Outputs[s.ID]; !ok {
					t.Errorf("got no stored output of step %s, want it", s.ID)
				}
			}
		})
	}
}

// cardReads is a store that counts the card reads of card steps.
type cardReads struct {
	cardflow.Store
	mu    sync.Mutex
	reads int
}

func (s *cardReads) GetLatestActiveCard(ctx context.Context, org, cardID string) (*cardflow.Card, error) {
	s.mu.Lock()
	s.reads++
	s.mu.Unlock()
	return s.Store.GetLatestActiveCard(ctx, org, cardID)
}

// A card step reads and expands its card once when its wait opens in the
// Advance that ran it, and sends it for that wait.
func TestCardPreparedOnce(t *testing.T) { onEachStore(t, testCardPreparedOnce) }

func testCardPreparedOnce(t *testing.T, b backend) {
	f := newFixture(t, b)
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	reads := &cardReads{Store: f.store}
	if f.eng, err = engine.New(reads, f.outbox, env, engine.WithClock(f.clock.now)); err != nil {
		t.Fatal(err)
	}
	steps, conns := approvalDefinition(false)
	f.card(steps)
	ref := f.start(steps, conns, obj{"amount": 1200}, nil)
	if res := f.advance(ref); res.Status != cardflow.ExecWaiting {
		t.Fatalf("got %+v, want WAITING", res)
	}
	if reads.reads != 1 {
		t.Errorf("got %d card reads, want 1", reads.reads)
	}
	items, _, err := f.outbox.ListDeliveries(context.Background(), f.org, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Wait != 1 || toJSON(items[0].Data) != `{"amount":1200}` {
		t.Errorf("outbox: got %s, want one delivery for wait 1 with amount 1200", toJSON(items))
	}
}
