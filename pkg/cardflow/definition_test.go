package cardflow_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// fakeKind is a step kind with fixed traits whose config is valid unless it
// holds "invalid".
type fakeKind cardflow.StepTraits

func (k fakeKind) Traits() cardflow.StepTraits { return cardflow.StepTraits(k) }

func (k fakeKind) ValidateConfig(config, _ map[string]any) error {
	if msg, ok := config["invalid"].(string); ok {
		return errors.New(msg)
	}
	return nil
}

// fakeKinds stands for pkg/steps: one kind of each role and set of exits.
type fakeKinds []struct {
	name string
	kind fakeKind
}

func (ks fakeKinds) Lookup(typ string) (cardflow.StepKind, bool) {
	for _, k := range ks {
		if k.name == typ {
			return k.kind, true
		}
	}
	return nil, false
}

func (ks fakeKinds) Names() []string {
	var names []string
	for _, k := range ks {
		names = append(names, k.name)
	}
	return names
}

var kinds = fakeKinds{
	{"trigger", fakeKind{Role: cardflow.RoleTrigger}},
	{"task", fakeKind{}},
	{"call", fakeKind{Exits: []string{cardflow.ExitError}}},
	{"condition", fakeKind{Role: cardflow.RoleCondition}},
	{"card", fakeKind{Exits: []string{cardflow.ExitError, cardflow.ExitTimeout}, Delivers: true}},
	{"wait", fakeKind{Exits: []string{cardflow.ExitTimeout}}},
	{"end", fakeKind{Role: cardflow.RoleEnd}},
}

func step(id, typ string, cfg map[string]any) cardflow.Step {
	return cardflow.Step{ID: id, Name: "Step " + id, Type: typ, Config: cfg}
}

func conn(from, to string) cardflow.Connection { return cardflow.Connection{From: from, To: to} }

// approval is the documented example approval workflow, valid as it stands.
func approval() *cardflow.Workflow {
	return &cardflow.Workflow{
		WorkflowName: "Invoice approval",
		WorkflowSteps: []cardflow.Step{
			step("start", "trigger", map[string]any{"kind": "REQUEST"}),
			step("big", "condition", nil),
			step("approve", "card", map[string]any{"card_id": "C1", "timeout": "PT72H"}),
			step("done", "end", map[string]any{"status": "SUCCEEDED"}),
			step("auto", "end", map[string]any{"status": "SUCCEEDED"}),
		},
		WorkflowConnections: []cardflow.Connection{
			conn("start", "big"),
			{From: "big", To: "approve", When: "input.amount > 1000"},
			conn("big", "auto"),
			conn("approve", "done"),
			{From: "approve", To: "auto", On: "timeout"},
		},
	}
}

func TestValidateDefinition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(w *cardflow.Workflow)
		want   string // substring of the error message; "" means valid
	}{
		{"valid", func(w *cardflow.Workflow) {}, ""},
		{"no name", func(w *cardflow.Workflow) { w.WorkflowName = " " }, "workflow_name is required"},
		{"no steps", func(w *cardflow.Workflow) { w.WorkflowSteps = nil }, "at least a trigger"},
		{"bad id", func(w *cardflow.Workflow) { w.WorkflowSteps[1].ID = "9x" }, `workflow_steps[1]: id "9x"`},
		{"duplicate id", func(w *cardflow.Workflow) { w.WorkflowSteps[4].ID = "done" }, `workflow_steps[4] (id "done"): step id is used twice`},
		{"no step name", func(w *cardflow.Workflow) { w.WorkflowSteps[2].Name = "" }, `(id "approve"): name is required`},
		{"unknown type", func(w *cardflow.Workflow) { w.WorkflowSteps[1].Type = "loop" },
			`workflow_steps[1] (id "big"): unknown type "loop"; use trigger, task, call, condition, card, wait or end`},
		{"two triggers", func(w *cardflow.Workflow) {
			w.WorkflowSteps[1] = step("big", "trigger", map[string]any{"kind": "REQUEST"})
		}, `exactly one trigger step, and "start" is one already`},
		{"no trigger", func(w *cardflow.Workflow) {
			w.WorkflowSteps[0].Type = "task"
		}, "no trigger step"},
		{"dangling from", func(w *cardflow.Workflow) { w.WorkflowConnections[0].From = "nowhere" }, "workflow_connections[0] (nowhere -> big): from names no step"},
		{"dangling to", func(w *cardflow.Workflow) { w.WorkflowConnections[3].To = "nowhere" }, "workflow_connections[3] (approve -> nowhere): to names no step"},
		{"into trigger", func(w *cardflow.Workflow) { w.WorkflowConnections[3].To = "start" }, "nothing may lead into the trigger"},
		{"out of end", func(w *cardflow.Workflow) {
			w.WorkflowConnections = append(w.WorkflowConnections, conn("done", "auto"))
		}, "an end step has no outgoing connections"},
		{"when outside condition", func(w *cardflow.Workflow) { w.WorkflowConnections[0].When = "true" }, "only condition steps have when"},
		{"wrong exit", func(w *cardflow.Workflow) { w.WorkflowConnections[4].On = "retry" }, `a card step has no "retry" exit`},
		{"no default", func(w *cardflow.Workflow) { w.WorkflowConnections[2].When = "true" }, `(id "big"): needs exactly one default connection`},
		{"unreachable", func(w *cardflow.Workflow) {
			w.WorkflowSteps = append(w.WorkflowSteps, step("orphan", "end", nil))
		}, `(id "orphan"): not reachable from the trigger step "start"`},
		{"no end reachable", func(w *cardflow.Workflow) {
			w.WorkflowSteps = []cardflow.Step{
				step("start", "trigger", map[string]any{"kind": "REQUEST"}),
				step("a", "wait", nil),
				step("b", "wait", nil),
			}
			w.WorkflowConnections = []cardflow.Connection{conn("start", "a"), conn("a", "b"), conn("b", "a")}
		}, "no end step is reachable"},
		{"bad config", func(w *cardflow.Workflow) { w.WorkflowSteps[2].Config["invalid"] = "config.card_id is required" },
			`workflow_steps[2] (id "approve"): config.card_id is required`},
		{"error exit of a call", func(w *cardflow.Workflow) {
			w.WorkflowSteps[1] = step("big", "call", nil)
			w.WorkflowConnections[1] = cardflow.Connection{From: "big", To: "approve", On: "error"}
		}, ""},
		{"timeout exit of a call", func(w *cardflow.Workflow) {
			w.WorkflowSteps[1] = step("big", "call", nil)
			w.WorkflowConnections[1] = cardflow.Connection{From: "big", To: "approve", On: "timeout"}
		}, `a call step has no "timeout" exit`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := approval()
			tt.change(w)
			err := w.ValidateDefinition(kinds)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			if got := cardflow.ErrorCode(err); got != cardflow.EINVALID {
				t.Fatalf("got code %q (%v), want %q", got, err, cardflow.EINVALID)
			}
			if got := cardflow.ErrorMessage(err); !strings.Contains(got, tt.want) {
				t.Errorf("got message %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // time.Duration string, or "error"
	}{
		{"PT72H", "72h0m0s"},
		{"P2D", "48h0m0s"},
		{"P1W", "168h0m0s"},
		{"P1DT2H3M4S", "26h3m4s"},
		{"PT0.5S", "500ms"},
		{"PT5M", "5m0s"},
		{"P", "error"},
		{"PT", "error"},
		{"P1Y", "error"},
		{"PT0S", "error"},
		{"5m", "error"},
		{"", "error"},
		{"PT1000000000S", "277777h46m40s"},
		{"PT1000000001S", "error"},
		{"P1653W", "277704h0m0s"},
		{"P0370765D", "error"},
		{"P99999999999999999999W", "error"},
		{"P١D", "error"},
	}
	for _, tt := range tests {
		d, err := cardflow.ParseDuration(tt.in)
		got := d.String()
		if err != nil {
			got = "error"
		}
		if got != tt.want {
			t.Errorf("ParseDuration(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestParseAge(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // time.Duration string, or "error"
	}{
		{"PT24H", "24h0m0s"},
		{"P0D", "0s"},
		{"PT0S", "0s"},
		{"P0370765D", "277777h46m40s"},
		{"P99999999999999999999W", "277777h46m40s"},
		{"P", "error"},
		{"PT", "error"},
		{"P1M", "error"},
	}
	for _, tt := range tests {
		d, err := cardflow.ParseAge(tt.in)
		got := d.String()
		if err != nil {
			got = "error"
		}
		if got != tt.want {
			t.Errorf("ParseAge(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}
