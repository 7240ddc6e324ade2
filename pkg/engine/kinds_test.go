package engine_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/fakes/saptest"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/steps"
)

// TestEveryKindRuns checks and runs a tiny workflow around each registered
// step kind: the engine reaches kinds only through the registry, so a new
// kind runs here once it has a sample, and one without a sample fails.
func TestEveryKindRuns(t *testing.T) { onEachStore(t, testEveryKindRuns) }

func testEveryKindRuns(t *testing.T, b backend) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok": true}`))
	}))
	defer srv.Close()
	sap := saptest.New(saptest.Config{Version: "V2", Client: "100", User: "CARDFLOW", Password: "Welcome-2026"})
	defer sap.Close()
	f := newFixture(t, b, allowLoopback(t), engine.WithSecrets(secretMap{"sap-test": "CARDFLOW:Welcome-2026"}))
	card := f.cardWith(nil, approvalCard())
	resume := func(ref cardflow.ExecutionRef) engine.Result {
		f.resume(ref, obj{"decision": "approve"})
		return f.advance(ref)
	}
	samples := map[string]struct {
		config       obj
		integrations obj
		// first is the status the first Advance ends in, when the step
		// does not finish at once; then moves it on.
		first string
		then  func(ref cardflow.ExecutionRef) engine.Result
	}{
		"trigger":   {config: obj{"kind": "REQUEST"}},
		"http":      {config: obj{"method": "GET", "url": srv.URL + "/orders/{{ input.amount }}"}},
		"erp":       {config: obj{"service": sap.Service(), "entity": "A_PurchaseOrder"}, integrations: obj{"erp": obj{"type": "SAP", "base_url": sap.URL, "client": "100", "auth": obj{"type": "basic", "secret": "sap-test"}}}},
		"transform": {config: obj{"output": obj{"double": "{{ input.amount * 2.0 }}"}}},
		"condition": {config: obj{}},
		"card":      {config: obj{"card_id": card.CardID, "data": obj{"amount": "{{ input.amount }}"}, "timeout": "PT1H"}, first: cardflow.ExecWaiting, then: resume},
		"approval": {config: obj{"card_id": card.CardID, "approvers": []any{"ann@example.com"}, "policy": "first", "timeout": "PT1H"}, first: cardflow.ExecWaiting, then: func(ref cardflow.ExecutionRef) engine.Result {
			// Only the approval's own decision moves it on.
			f.answer(ref, "ann@example.com", cardflow.DecisionApprove)
			return resume(ref)
		}},
		"wait": {config: obj{"timeout": "PT1H"}, first: cardflow.ExecWaiting, then: resume},
		"delay": {config: obj{"duration": "PT1M"}, first: engine.Sleeping, then: func(ref cardflow.ExecutionRef) engine.Result {
			f.clock.add(time.Minute)
			return f.advance(ref)
		}},
		"end": {config: obj{"status": "SUCCEEDED", "output": "{{ input }}"}},
	}
	for _, name := range steps.Kinds.Names() {
		t.Run(name, func(t *testing.T) {
			s, ok := samples[name]
			if !ok {
				t.Fatalf("kind %q has no sample here", name)
			}
			kind, _ := steps.Kinds.Kind(name)
			start, done := step("start", "trigger", obj{"kind": "REQUEST"}), step("done", "end", obj{})
			defs := []cardflow.Step{start, done}
			conns := []cardflow.Connection{{From: "start", To: "done"}}
			switch kind.Traits().Role {
			case cardflow.RoleTrigger:
				defs[0] = step("start", name, s.config)
			case cardflow.RoleEnd:
				defs[1] = step("done", name, s.config)
			default:
				defs = []cardflow.Step{start, step("x", name, s.config), done}
				conns = []cardflow.Connection{{From: "start", To: "x"}, {From: "x", To: "done"}}
			}
			ref := f.start(defs, conns, obj{"amount": 12.0}, s.integrations)
			res := f.advance(ref)
			if s.first != "" {
				if res.Status != s.first {
					t.Fatalf("first Advance: got %+v, want %s", res, s.first)
				}
				res = s.then(ref)
			}
			ex := f.get(ref)
			if res.Status != cardflow.ExecSucceeded {
				t.Fatalf("got %+v (%s), want SUCCEEDED", res, toJSON(ex.WorkflowOutputPayload))
			}
			for _, d := range defs {
				if l := ex.CondensedLogs[d.ID]; l.Status != cardflow.ExecSucceeded {
					t.Errorf("condensed log of %s: got %+v, want SUCCEEDED", d.ID, l)
				}
			}
		})
	}
	for name := range samples {
		if _, ok := steps.Kinds.Kind(name); !ok {
			t.Errorf("sample for %q, which is not a registered kind", name)
		}
	}
}
