package cardflow_test

import (
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func step(id, typ string, cfg map[string]any) cardflow.Step {
	return cardflow.Step{ID: id, Name: "Step " + id, Type: typ, Config: cfg}
}

func conn(from, to string) cardflow.Connection { return cardflow.Connection{From: from, To: to} }

// approval is the example of DESIGN section 8, valid as it stands.
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
		{"unknown type", func(w *cardflow.Workflow) { w.WorkflowSteps[1].Type = "loop" }, `unknown type "loop"`},
		{"two triggers", func(w *cardflow.Workflow) {
			w.WorkflowSteps[1] = step("big", "trigger", map[string]any{"kind": "REQUEST"})
		}, `exactly one trigger step, and "start" is one already`},
		{"no trigger", func(w *cardflow.Workflow) {
			w.WorkflowSteps[0].Type = "transform"
			w.WorkflowSteps[0].Config = map[string]any{"output": "1"}
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
		{"card without card_id", func(w *cardflow.Workflow) { delete(w.WorkflowSteps[2].Config, "card_id") }, "config.card_id is required for a card step"},
		{"bad timeout", func(w *cardflow.Workflow) { w.WorkflowSteps[2].Config["timeout"] = "72h" }, `config.timeout: "72h" is not an ISO 8601 duration`},
		{"bad end status", func(w *cardflow.Workflow) { w.WorkflowSteps[3].Config["status"] = "DONE" }, "config.status must be SUCCEEDED or FAILED"},
		{"schedule", func(w *cardflow.Workflow) {
			w.WorkflowSteps[0].Config = map[string]any{"kind": "SCHEDULE", "expression": "cron(0 8 ? * MON-FRI *)", "timezone": "Europe/Berlin"}
		}, ""},
		{"schedule bad zone", func(w *cardflow.Workflow) {
			w.WorkflowSteps[0].Config = map[string]any{"kind": "SCHEDULE", "expression": "rate(5 minutes)", "timezone": "Mars/Base"}
		}, `config.timezone "Mars/Base"`},
		{"schedule bad expression", func(w *cardflow.Workflow) {
			w.WorkflowSteps[0].Config = map[string]any{"kind": "SCHEDULE", "expression": "every day"}
		}, "must be cron(...), rate(...) or at(...)"},
		{"bad trigger kind", func(w *cardflow.Workflow) { w.WorkflowSteps[0].Config["kind"] = "EVENT" }, "config.kind must be REQUEST or SCHEDULE"},
		{"erp without service", func(w *cardflow.Workflow) {
			w.WorkflowSteps[1] = step("big", "erp", map[string]any{"entity": "A_PurchaseOrder"})
			w.WorkflowConnections[1] = cardflow.Connection{From: "big", To: "approve", On: "error"}
		}, "config.service is required for a erp step"},
		{"erp with a URL as service", func(w *cardflow.Workflow) {
			w.WorkflowSteps[1] = step("big", "erp", map[string]any{"service": "https://sap/x", "entity": "A"})
			w.WorkflowConnections[1] = cardflow.Connection{From: "big", To: "approve", On: "error"}
		}, `config.service "https://sap/x" must be the OData service path`},
		{"erp without entity", func(w *cardflow.Workflow) {
			w.WorkflowSteps[1] = step("big", "erp", map[string]any{"service": "/sap/opu/odata/sap/X_SRV"})
			w.WorkflowConnections[1] = cardflow.Connection{From: "big", To: "approve", On: "error"}
		}, "config.entity is required"},
		{"erp with a bad method", func(w *cardflow.Workflow) {
			w.WorkflowSteps[1] = step("big", "erp", map[string]any{"service": "/sap/opu/odata/sap/X_SRV", "entity": "A", "method": "MERGE"})
			w.WorkflowConnections[1] = cardflow.Connection{From: "big", To: "approve", On: "error"}
		}, `config.method "MERGE" is not one of GET, POST, PUT, PATCH, DELETE`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := approval()
			tt.change(w)
			err := w.ValidateDefinition()
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
