package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/execrecord"
	"github.com/cardflow/cardflow/pkg/expr"
)

type obj = map[string]any

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// fixture is an engine over a real store of one backend.
type fixture struct {
	t      *testing.T
	store  cardflow.Store
	outbox outbox
	eng    *engine.Engine
	clock  *clock
	org    string
}

// outbox is where a fixture's engine delivers cards: the embedded store's
// outbox, which the tests read.
type outbox interface {
	cardflow.Deliverer
	ListDeliveries(ctx context.Context, org string, limit int, after string) ([]*cardflow.Delivery, bool, error)
}

// backend is a store the engine's tests run on, with the outbox beside it.
type backend struct {
	name string
	open func(t *testing.T) (cardflow.Store, outbox)
}

// backends are the stores the engine runs on: the embedded one, its own
// outbox, and DynamoDB on DynamoDB Local (skipped without it), with an
// embedded outbox.
var backends = []backend{{"bolt", openBolt}, {"dynamodb", openDynamoDB}}

// onEachStore runs test on each backend, as internal/storetest's contract runs
// on each store.
func onEachStore(t *testing.T, test func(*testing.T, backend)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { test(t, b) })
	}
}

func openBolt(t *testing.T) (cardflow.Store, outbox) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store, store
}

func openDynamoDB(t *testing.T) (cardflow.Store, outbox) {
	store := dynamostoretest.Open(t)
	_, box := openBolt(t)
	return store, box
}

func newFixture(t *testing.T, b backend, opts ...engine.Option) *fixture {
	t.Helper()
	store, box := b.open(t)
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}
	eng, err := engine.New(store, box, env, append([]engine.Option{engine.WithClock(c.now)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, store: store, outbox: box, eng: eng, clock: c, org: "org-" + cardflow.NewID(time.Now())}
}

func step(id, typ string, cfg obj) cardflow.Step {
	return cardflow.Step{ID: id, Name: "Step " + id, Type: typ, Config: cfg}
}

// start stores an execution of a definition, as a trigger does, and returns
// its reference.
func (f *fixture) start(steps []cardflow.Step, conns []cardflow.Connection, input obj, integrations obj) cardflow.ExecutionRef {
	f.t.Helper()
	w := &cardflow.Workflow{OrganizationID: f.org, WorkflowName: "test", WorkflowSteps: steps, WorkflowConnections: conns, WorkflowIntegrations: integrations}
	if err := f.eng.Check(w); err != nil {
		f.t.Fatalf("check: %v", err)
	}
	return f.startUnchecked(steps, conns, input, integrations)
}

// startUnchecked stores an execution of a definition without checking it, as one
// saved under earlier rules would be, and returns its reference.
func (f *fixture) startUnchecked(steps []cardflow.Step, conns []cardflow.Connection, input obj, integrations obj) cardflow.ExecutionRef {
	f.t.Helper()
	now := f.clock.now()
	id := cardflow.NewID(now)
	ex := &cardflow.Execution{
		WorkflowExecutionID: id, WorkflowID: "wf-" + id, WorkflowVersion: 1, OrganizationID: f.org,
		WorkflowTriggerType: cardflow.TriggerRequest, Status: cardflow.ExecRunning,
		CondensedLogs: map[string]cardflow.StepLog{}, WorkflowInputPayload: input,
		WorkflowDetails: cardflow.WorkflowDetails{WorkflowName: "test", WorkflowSteps: steps, WorkflowConnections: conns},
		CreatedOn:       now.UnixMilli(), ModifiedOn: now.UnixMilli(),
		State: cardflow.ExecutionState{StepID: steps[0].ID, ProcessID: "p-" + id, Outputs: obj{}, Integrations: integrations},
	}
	p := &cardflow.Process{OrganizationID: f.org, ProcessID: "p-" + id, WorkflowID: ex.WorkflowID, ExecutionID: id}
	if err := f.store.StartExecution(context.Background(), ex, p, nil); err != nil {
		f.t.Fatal(err)
	}
	return ex.Ref()
}

func (f *fixture) advance(ref cardflow.ExecutionRef) engine.Result {
	f.t.Helper()
	res, err := f.eng.Advance(context.Background(), ref)
	if err != nil {
		f.t.Fatalf("Advance: %v", err)
	}
	return res
}

func (f *fixture) get(ref cardflow.ExecutionRef) *cardflow.Execution {
	f.t.Helper()
	ex, err := f.store.GetExecution(context.Background(), ref.OrganizationID, ref.WorkflowID, ref.ExecutionID)
	if err != nil {
		f.t.Fatal(err)
	}
	return ex
}

// resume claims the open wait of an execution the way resumeworkflow does.
func (f *fixture) resume(ref cardflow.ExecutionRef, payload obj) {
	f.t.Helper()
	p, err := f.store.GetProcess(context.Background(), f.org, "p-"+ref.ExecutionID)
	if err != nil {
		f.t.Fatal(err)
	}
	if p.Wait == nil {
		p.Early = &cardflow.Resume{Payload: payload, Actor: "test", ReceivedOn: f.clock.now().UnixMilli()}
	} else {
		p.Wait.Resume = &cardflow.Resume{Payload: payload, Actor: "test", ReceivedOn: f.clock.now().UnixMilli()}
	}
	if err := f.store.PutProcess(context.Background(), p); err != nil {
		f.t.Fatal(err)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func eventTypes(ex *cardflow.Execution) []string {
	var out []string
	for _, e := range ex.WorkflowEventLog.Events {
		out = append(out, e.Type+":"+e.StepID)
	}
	return out
}

func TestSynchronousChain(t *testing.T) { onEachStore(t, testSynchronousChain) }

func testSynchronousChain(t *testing.T, b backend) {
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body obj
		json.NewDecoder(r.Body).Decode(&body)
		calls = append(calls, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("X-Order")+" "+toJSON(body))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"vendor": "ACME", "limit": 5000}`))
	}))
	defer srv.Close()
	f := newFixture(t, b, allowLoopback(t))
	steps := []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("lookup", "http", obj{"method": "POST", "url": srv.URL + "/orders/{{ input.id }}",
			"headers": obj{"X-Order": "{{ input.id }}"}, "body": obj{"amount": "{{ input.amount }}"}}),
		step("shape", "transform", obj{"output": obj{"vendor": "{{ steps.lookup.output.body.vendor }}", "over": "{{ input.amount > steps.lookup.output.body.limit }}"}}),
		step("check", "condition", obj{}),
		step("big", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.shape.output }}"}),
		step("small", "end", obj{"status": "SUCCEEDED", "output": "small order for {{ steps.shape.output.vendor }}"}),
	}
	conns := []cardflow.Connection{
		{From: "start", To: "lookup"}, {From: "lookup", To: "shape"}, {From: "shape", To: "check"},
		{From: "check", To: "big", When: "steps.shape.output.over"}, {From: "check", To: "small"},
	}
	for _, tc := range []struct {
		amount  float64
		want    string
		endStep string
	}{
		{7000, `{"over":true,"vendor":"ACME"}`, "big"},
		{100, `{"value":"small order for ACME"}`, "small"},
	} {
		calls = nil
		ref := f.start(steps, conns, obj{"id": "PO-7", "amount": tc.amount}, nil)
		if res := f.advance(ref); res.Status != cardflow.ExecSucceeded {
			t.Fatalf("amount %v: got result %+v, want SUCCEEDED", tc.amount, res)
		}
		ex := f.get(ref)
		if got := toJSON(ex.WorkflowOutputPayload); got != tc.want {
			t.Errorf("amount %v: got output %s, want %s", tc.amount, got, tc.want)
		}
		if got, want := ex.WorkflowCurrentState, "Step "+tc.endStep; got != want {
			t.Errorf("amount %v: got current state %q, want %q", tc.amount, got, want)
		}
		wantCall := "POST /orders/PO-7 PO-7 " + toJSON(obj{"amount": tc.amount})
		if len(calls) != 1 || calls[0] != wantCall {
			t.Errorf("amount %v: got calls %q, want [%q]", tc.amount, calls, wantCall)
		}
		for _, id := range []string{"start", "lookup", "shape", "check", tc.endStep} {
			if l, ok := ex.CondensedLogs[id]; !ok || l.Status != cardflow.ExecSucceeded {
				t.Errorf("amount %v: condensed log of %s: got %+v, want SUCCEEDED", tc.amount, id, l)
			}
		}
		got := strings.Join(eventTypes(ex), " ")
		want := "StepStarted:start StepFinished:start StepStarted:lookup StepFinished:lookup StepStarted:shape StepFinished:shape " +
			"StepStarted:check StepFinished:check StepStarted:" + tc.endStep + " StepFinished:" + tc.endStep + " ExecutionSucceeded:" + tc.endStep
		if got != want {
			t.Errorf("amount %v: events\n got %s\nwant %s", tc.amount, got, want)
		}
	}
}

func TestStepFailures(t *testing.T) { onEachStore(t, testStepFailures) }

func testStepFailures(t *testing.T, b backend) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error": {"message": {"value": "Purchase order 99 does not exist"}}}`))
	}))
	defer srv.Close()
	base := []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("call", "http", obj{"method": "GET", "url": srv.URL + "/po/99"}),
		step("done", "end", obj{"status": "SUCCEEDED"}),
	}
	for _, tc := range []struct {
		name       string
		steps      []cardflow.Step
		conns      []cardflow.Connection
		wantStatus string
		wantOutput string
		// wantFailed is the step a redrive runs again: none when the
		// workflow ended FAILED by its own end step.
		wantFailed string
	}{
		{
			name:       "no error exit",
			wantFailed: "call",
			steps:      base,
			conns:      []cardflow.Connection{{From: "start", To: "call"}, {From: "call", To: "done"}},
			wantStatus: cardflow.ExecFailed,
			wantOutput: `{"error":"GET ` + srv.URL + `/po/99 answered 404 Not Found: Purchase order 99 does not exist","step":"call"}`,
		},
		{
			name: "error exit",
			steps: append(base[:3:3], step("handle", "end", obj{"status": "FAILED",
				"output": obj{"status": "{{ steps.call.output.status }}", "why": "{{ steps.call.output.body.error.message.value }}"}})),
			conns:      []cardflow.Connection{{From: "start", To: "call"}, {From: "call", To: "done"}, {From: "call", To: "handle", On: "error"}},
			wantStatus: cardflow.ExecFailed,
			wantOutput: `{"status":404,"why":"Purchase order 99 does not exist"}`,
			wantFailed: "",
		},
		{
			name: "bad data at run time",
			steps: []cardflow.Step{
				step("start", "trigger", obj{"kind": "REQUEST"}),
				step("calc", "transform", obj{"output": "{{ input.items[3] }}"}),
				step("done", "end", obj{"status": "SUCCEEDED"}),
			},
			conns:      []cardflow.Connection{{From: "start", To: "calc"}, {From: "calc", To: "done"}},
			wantStatus: cardflow.ExecFailed,
			wantFailed: "calc",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, b, allowLoopback(t))
			ref := f.start(tc.steps, tc.conns, obj{"items": []any{1}}, nil)
			if res := f.advance(ref); res.Status != tc.wantStatus {
				t.Fatalf("got %+v, want %s", res, tc.wantStatus)
			}
			ex := f.get(ref)
			if got := toJSON(ex.WorkflowOutputPayload); tc.wantOutput != "" && got != tc.wantOutput {
				t.Errorf("got output %s, want %s", got, tc.wantOutput)
			}
			last := ex.WorkflowEventLog.Events[len(ex.WorkflowEventLog.Events)-1]
			if last.Type != cardflow.EventFailed || last.Message == "" {
				t.Errorf("last event: got %+v, want ExecutionFailed with a reason", last)
			}
			if got := ex.State.FailedStep; got != tc.wantFailed {
				t.Errorf("failed step: got %q, want %q", got, tc.wantFailed)
			}
		})
	}
}

// TestCardTemplateFails: a card that does not expand with the step's data
// fails the step, by its error exit where it has one, and sends nothing.
func TestCardTemplateFails(t *testing.T) { onEachStore(t, testCardTemplateFails) }

func testCardTemplateFails(t *testing.T, b backend) {
	for _, tc := range []struct {
		name      string
		payload   obj
		errorExit bool
		want      string // in the reason
	}{
		{"binding fails", obj{"type": "AdaptiveCard", "body": []any{obj{"type": "TextBlock", "text": "${div(amount, 0)}"}}}, false,
			"the card template does not expand: card_payload.body[0].text: ${div(amount, 0)}: Cannot divide by 0"},
		{"binding fails, error exit", obj{"type": "AdaptiveCard", "body": []any{obj{"type": "TextBlock", "text": "${div(amount, 0)}"}}}, true,
			"the card template does not expand: card_payload.body[0].text: ${div(amount, 0)}: Cannot divide by 0"},
		{"invalid card", obj{"type": "AdaptiveCard", "version": "1.5", "body": []any{obj{"type": "TextBlock", "text": "t", "isVisible": "${amount}"}}}, false,
			"the expanded card is not valid: card_payload.body[0].isVisible: must be true or false, got 1200"},
		{"no card", obj{"type": "AdaptiveCard", "$when": "${amount < 10}", "body": []any{}}, true,
			"the card template expands to no card"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, b)
			steps, conns := approvalDefinition(false)
			if tc.errorExit {
				steps = append(steps, step("handle", "end", obj{"status": "FAILED", "output": "{{ steps.ask.output.error }}"}))
				conns = append(conns, cardflow.Connection{From: "ask", To: "handle", On: "error"})
			}
			card := f.cardWith(steps, tc.payload)
			ref := f.start(steps, conns, obj{"amount": 1200}, nil)
			if res := f.advance(ref); res.Status != cardflow.ExecFailed {
				t.Fatalf("got %+v, want FAILED", res)
			}
			ex := f.get(ref)
			want := "card " + card.CardID + " version 1: " + tc.want
			var got string
			if tc.errorExit {
				// The end step's output, a string, is kept under "value".
				got, _ = ex.WorkflowOutputPayload[cardflow.PayloadValueKey].(string)
				if _, ok := ex.CondensedLogs["handle"]; !ok {
					t.Errorf("the error exit did not run: logs %s", toJSON(ex.CondensedLogs))
				}
			} else {
				got, _ = ex.WorkflowOutputPayload["error"].(string)
			}
			if !strings.HasPrefix(got, want) {
				t.Errorf("reason: got %q, want it to start with %q", got, want)
			}
			if items, _, _ := f.outbox.ListDeliveries(context.Background(), f.org, 10, ""); len(items) != 0 {
				t.Errorf("outbox: got %s, want nothing sent", toJSON(items))
			}
		})
	}
}

func approvalDefinition(timeoutExit bool) ([]cardflow.Step, []cardflow.Connection) {
	steps := []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("ask", "card", obj{"card_id": "CARD", "data": obj{"amount": "{{ input.amount }}"}, "timeout": "PT1H"}),
		step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.ask.output }}"}),
	}
	conns := []cardflow.Connection{{From: "start", To: "ask"}, {From: "ask", To: "done"}}
	if timeoutExit {
		steps = append(steps, step("late", "end", obj{"status": "FAILED", "output": "no answer"}))
		conns = append(conns, cardflow.Connection{From: "ask", To: "late", On: "timeout"})
	}
	return steps, conns
}

// approvalCard is a card template that shows the step's data.
func approvalCard() obj {
	return obj{"type": "AdaptiveCard", "version": "1.5", "body": []any{
		obj{"type": "TextBlock", "text": "Amount: ${formatNumber(amount, 2)} EUR"},
		obj{"type": "TextBlock", "text": "Large purchase", "$when": "${amount > 1000}"},
	}}
}

// card stores a published card and rewrites the definition's CARD id.
func (f *fixture) card(steps []cardflow.Step) *cardflow.Card {
	f.t.Helper()
	return f.cardWith(steps, approvalCard())
}

func (f *fixture) cardWith(steps []cardflow.Step, payload obj) *cardflow.Card {
	f.t.Helper()
	c := &cardflow.Card{OrganizationID: f.org, CardName: "approve", CardPayload: payload}
	if err := f.store.SaveCardVersion(context.Background(), c); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.store.PublishCard(context.Background(), f.org, c.CardID, 1, "test", 1); err != nil {
		f.t.Fatal(err)
	}
	for i := range steps {
		if steps[i].Config["card_id"] == "CARD" {
			steps[i].Config["card_id"] = c.CardID
		}
	}
	return c
}

func TestCardWait(t *testing.T) { onEachStore(t, testCardWait) }

func testCardWait(t *testing.T, b backend) {
	for _, tc := range []struct {
		name        string
		timeoutExit bool
		early       bool
		after       time.Duration // time passing before the answer
		answer      bool
		wantStatus  string
		wantOutput  string
	}{
		{name: "resumed", answer: true, after: time.Minute, wantStatus: cardflow.ExecSucceeded, wantOutput: `{"decision":"approve"}`},
		{name: "resumed early", early: true, answer: true, wantStatus: cardflow.ExecSucceeded, wantOutput: `{"decision":"approve"}`},
		{name: "timed out with exit", timeoutExit: true, after: time.Hour, wantStatus: cardflow.ExecFailed, wantOutput: `{"value":"no answer"}`},
		{name: "timed out without exit", after: time.Hour, wantStatus: cardflow.ExecTimedOut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, b)
			steps, conns := approvalDefinition(tc.timeoutExit)
			card := f.card(steps)
			ref := f.start(steps, conns, obj{"amount": 1200}, nil)
			if tc.early {
				f.resume(ref, obj{"decision": "approve"})
			}
			res := f.advance(ref)
			if tc.early {
				if res.Status != tc.wantStatus {
					t.Fatalf("got %+v, want %s at once", res, tc.wantStatus)
				}
			} else {
				if res.Status != cardflow.ExecWaiting || res.Wait == nil || res.WakeAt != f.clock.now().Add(time.Hour).UnixMilli() {
					t.Fatalf("got %+v, want WAITING with a wait timing out in an hour", res)
				}
				if ex := f.get(ref); ex.Status != cardflow.ExecWaiting || ex.WorkflowCurrentState != "Step ask" {
					t.Errorf("waiting execution: got %s in %q, want WAITING in Step ask", ex.Status, ex.WorkflowCurrentState)
				}
				// Advancing again before anything happened changes nothing.
				if again := f.advance(ref); again.Status != cardflow.ExecWaiting {
					t.Errorf("second Advance: got %+v, want WAITING", again)
				}
				f.clock.add(tc.after)
				if tc.answer {
					f.resume(ref, obj{"decision": "approve"})
				}
				if res = f.advance(ref); res.Status != tc.wantStatus {
					t.Fatalf("got %+v, want %s", res, tc.wantStatus)
				}
			}
			ex := f.get(ref)
			if got := toJSON(ex.WorkflowOutputPayload); tc.wantOutput != "" && got != tc.wantOutput {
				t.Errorf("got output %s, want %s", got, tc.wantOutput)
			}
			items, _, err := f.outbox.ListDeliveries(context.Background(), f.org, 10, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != 1 || items[0].ProcessID != "p-"+ref.ExecutionID || toJSON(items[0].Data) != `{"amount":1200}` {
				t.Fatalf("outbox: got %s, want one delivery to p-%s with amount 1200", toJSON(items), ref.ExecutionID)
			}
			// The card goes out expanded with the data, under its own id and version.
			wantCard := `{"body":[{"text":"Amount: 1,200.00 EUR","type":"TextBlock"},{"text":"Large purchase","type":"TextBlock"}],"type":"AdaptiveCard","version":"1.5"}`
			if d := items[0]; toJSON(d.CardPayload) != wantCard || d.CardID != card.CardID || d.CardVersion != 1 {
				t.Errorf("delivered card: got %s %d %s, want %s 1 %s", d.CardID, d.CardVersion, toJSON(d.CardPayload), card.CardID, wantCard)
			}
			p, err := f.store.GetProcess(context.Background(), f.org, "p-"+ref.ExecutionID)
			if err != nil || !p.Closed {
				t.Errorf("process after the end: got %+v, %v, want closed", p, err)
			}
		})
	}
}

func TestDelay(t *testing.T) { onEachStore(t, testDelay) }

func testDelay(t *testing.T, b backend) {
	f := newFixture(t, b)
	steps := []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("short", "delay", obj{"duration": "PT5M"}),
		step("until", "delay", obj{"until": "input.at"}),
		step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.until.output.until }}"}),
	}
	conns := []cardflow.Connection{{From: "start", To: "short"}, {From: "short", To: "until"}, {From: "until", To: "done"}}
	at := f.clock.now().Add(time.Hour).Format(time.RFC3339)
	ref := f.start(steps, conns, obj{"at": at}, nil)
	for i, want := range []struct {
		status string
		wake   time.Time
		pass   time.Duration
	}{
		{engine.Sleeping, f.clock.now().Add(5 * time.Minute), 4 * time.Minute},
		{engine.Sleeping, f.clock.now().Add(5 * time.Minute), time.Minute},
		{engine.Sleeping, f.clock.now().Add(time.Hour), time.Hour},
	} {
		res := f.advance(ref)
		if res.Status != want.status || res.WakeAt != want.wake.UnixMilli() {
			t.Fatalf("advance %d: got %+v, want %s until %s", i, res, want.status, want.wake)
		}
		if ex := f.get(ref); ex.Status != cardflow.ExecWaiting {
			t.Errorf("advance %d: a sleeping execution's record says %s, want WAITING", i, ex.Status)
		}
		f.clock.add(want.pass)
	}
	if res := f.advance(ref); res.Status != cardflow.ExecSucceeded {
		t.Fatalf("got %+v, want SUCCEEDED", res)
	}
	if got, want := toJSON(f.get(ref).WorkflowOutputPayload), `{"value":"`+at+`"}`; got != want {
		t.Errorf("got output %s, want %s", got, want)
	}
}

func TestLoopLimit(t *testing.T) { onEachStore(t, testLoopLimit) }

func testLoopLimit(t *testing.T, b backend) {
	f := newFixture(t, b, engine.WithMaxSteps(50))
	steps := []cardflow.Step{
		step("start", "trigger", obj{"kind": "REQUEST"}),
		step("a", "transform", obj{"output": "x"}),
		step("check", "condition", obj{}),
		step("done", "end", obj{}),
	}
	conns := []cardflow.Connection{{From: "start", To: "a"}, {From: "a", To: "check"}, {From: "check", To: "a", When: "true"}, {From: "check", To: "done"}}
	ref := f.start(steps, conns, obj{}, nil)
	if res := f.advance(ref); res.Status != cardflow.ExecFailed {
		t.Fatalf("got %+v, want FAILED", res)
	}
	if got := toJSON(f.get(ref).WorkflowOutputPayload); !strings.Contains(got, "50 steps") {
		t.Errorf("got output %s, want the step limit named", got)
	}
}

func TestCheckRejectsBadExpressions(t *testing.T) { onEachStore(t, testCheckRejectsBadExpressions) }

func testCheckRejectsBadExpressions(t *testing.T, b backend) {
	f := newFixture(t, b)
	for _, tc := range []struct {
		name  string
		edit  func(w *cardflow.Workflow)
		wants []string
	}{
		{"undeclared name in a template", func(w *cardflow.Workflow) { w.WorkflowSteps[1].Config["output"] = "{{ inpt.amount }}" },
			[]string{"workflow_steps[1] (x)", "config.output", "column", "inpt"}},
		{"unbalanced template", func(w *cardflow.Workflow) { w.WorkflowSteps[1].Config["output"] = obj{"a": "{{ input.amount"} },
			[]string{"workflow_steps[1] (x)", "config.output"}},
		{"bad when", func(w *cardflow.Workflow) {
			w.WorkflowSteps[1] = step("x", "condition", nil)
			w.WorkflowConnections = append(w.WorkflowConnections, cardflow.Connection{From: "x", To: "done", When: "input.amount >"})
		}, []string{"workflow_connections[2] (x -> done) when", "column"}},
		{"bad schedule", func(w *cardflow.Workflow) {
			w.WorkflowSteps[0].Config = obj{"kind": "SCHEDULE", "expression": "cron(0 8 * * MON *)"}
		}, []string{"workflow_steps[0] (start)", "config.expression"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &cardflow.Workflow{
				WorkflowName:        "w",
				WorkflowSteps:       []cardflow.Step{step("start", "trigger", obj{"kind": "REQUEST"}), step("x", "transform", obj{"output": "ok"}), step("done", "end", obj{})},
				WorkflowConnections: []cardflow.Connection{{From: "start", To: "x"}, {From: "x", To: "done"}},
			}
			tc.edit(w)
			err := f.eng.Check(w)
			if cardflow.ErrorCode(err) != cardflow.EINVALID {
				t.Fatalf("got %v, want a VALIDATION_ERROR", err)
			}
			for _, want := range tc.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("got %q, want it to mention %q", err, want)
				}
			}
		})
	}
}

// TestReopensWaitAfterCrash stands for a process that died after recording
// the execution as waiting but before the wait opened.
func TestReopensWaitAfterCrash(t *testing.T) { onEachStore(t, testReopensWaitAfterCrash) }

func testReopensWaitAfterCrash(t *testing.T, b backend) {
	f := newFixture(t, b)
	steps, conns := approvalDefinition(false)
	f.card(steps)
	ref := f.start(steps, conns, obj{"amount": 1}, nil)
	ex := f.get(ref)
	ex.State.StepID, ex.State.Phase, ex.State.Wait, ex.Status = "ask", cardflow.PhaseWaiting, 1, cardflow.ExecWaiting
	ex.CondensedLogs["ask"] = cardflow.StepLog{StartedOn: 1}
	if err := f.store.PutExecution(context.Background(), ex); err != nil {
		t.Fatal(err)
	}
	if res := f.advance(ref); res.Status != cardflow.ExecWaiting || res.Wait == nil || res.Wait.Seq != 1 {
		t.Fatalf("got %+v, want the wait opened", res)
	}
	items, _, _ := f.outbox.ListDeliveries(context.Background(), f.org, 10, "")
	if len(items) != 1 {
		t.Errorf("got %d deliveries, want 1", len(items))
	}
}

// TestStateCap runs a chain of steps that each pass on a 60 KB input: the
// step whose output would take the execution's state past 1 MB fails it,
// saying so, and what is stored is the execution as it was before that
// step, ended FAILED.
func TestStateCap(t *testing.T) { onEachStore(t, testStateCap) }

func testStateCap(t *testing.T, b backend) {
	f := newFixture(t, b)
	steps := []cardflow.Step{step("start", "trigger", obj{"kind": "REQUEST"})}
	var conns []cardflow.Connection
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("copy%02d", i)
		conns = append(conns, cardflow.Connection{From: steps[len(steps)-1].ID, To: id})
		steps = append(steps, step(id, "transform", obj{"output": "{{ input.s }}"}))
	}
	steps = append(steps, step("done", "end", obj{}))
	conns = append(conns, cardflow.Connection{From: steps[len(steps)-2].ID, To: "done"})
	ref := f.start(steps, conns, obj{"s": strings.Repeat("a", 60<<10)}, nil)
	if res := f.advance(ref); res.Status != cardflow.ExecFailed {
		t.Fatalf("got %+v, want FAILED", res)
	}
	ex := f.get(ref)
	msg, _ := ex.WorkflowOutputPayload["error"].(string)
	if !regexp.MustCompile(`^execution state would be 1\.[0-9] MB; an execution may hold at most 1 MB$`).MatchString(msg) {
		t.Errorf("got error %q, want the state's size and the cap", msg)
	}
	failed, _ := ex.WorkflowOutputPayload["step"].(string)
	if _, ok := ex.State.Outputs[failed]; ok || failed == "" {
		t.Errorf("got the output of the failing step %q stored, want it left out", failed)
	}
	events := ex.WorkflowEventLog.Events
	if last := events[len(events)-1]; last.Type != cardflow.EventFailed || !strings.Contains(last.Message, msg) {
		t.Errorf("last event: got %+v, want ExecutionFailed with %q", last, msg)
	}
	w, err := execrecord.Split(ex)
	if err != nil {
		t.Fatal(err)
	}
	if w.Size > cardflow.MaxStateBytes || len(ex.State.Outputs) < 10 {
		t.Errorf("stored state: got %d bytes and %d outputs, want at most %d bytes and the steps before the failing one", w.Size, len(ex.State.Outputs), cardflow.MaxStateBytes)
	}
}
