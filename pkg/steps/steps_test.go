package steps_test

import (
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/steps"
)

type obj = map[string]any

// configCase is one config of a kind and what becomes of it.
type configCase struct {
	name         string
	config       obj
	integrations obj
	// want is a substring of the error; "" means the config is valid.
	want string
	// by says what finds the error.
	by finder
}

// finder is what finds an error in a config.
type finder int

const (
	// validating: decoding and validating the config, as both the
	// definition rules (ValidateConfig) and compiling do.
	validating finder = iota
	// checking: compiling the config (Check), after it validated.
	checking
	// saving: the definition rules alone, which see the workflow's
	// integrations; a run finds a missing one when the step runs.
	saving
)

// testConfigs validates and compiles each config with kind.
func testConfigs(t *testing.T, kind steps.Kind, cases []configCase) {
	t.Helper()
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			verr := kind.ValidateConfig(tc.config, tc.integrations)
			_, cerr := kind.Compile(env, tc.config)
			switch {
			case tc.want == "":
				if verr != nil || cerr != nil {
					t.Fatalf("got %v (validate), %v (compile), want no error", verr, cerr)
				}
			case tc.by == checking:
				if verr != nil {
					t.Fatalf("validate: got %v, want no error (Check finds %q)", verr, tc.want)
				}
				if cerr == nil || !strings.Contains(cerr.Error(), tc.want) {
					t.Errorf("compile: got %v, want an error containing %q", cerr, tc.want)
				}
			case tc.by == saving:
				if verr == nil || !strings.Contains(verr.Error(), tc.want) {
					t.Errorf("validate: got %v, want an error containing %q", verr, tc.want)
				}
				if cerr != nil {
					t.Errorf("compile: got %v, want no error", cerr)
				}
			case tc.by == validating:
				if verr == nil || !strings.Contains(verr.Error(), tc.want) {
					t.Errorf("validate: got %v, want an error containing %q", verr, tc.want)
				}
				if cerr == nil || verr == nil || cerr.Error() != verr.Error() {
					t.Errorf("compile: got %v, want the error validate gives", cerr)
				}
			default:
				t.Fatalf("no finder %d", tc.by)
			}
		})
	}
}

func step(id, typ string, cfg obj) cardflow.Step {
	return cardflow.Step{ID: id, Name: "Step " + id, Type: typ, Config: cfg}
}

// approval is a valid workflow that uses every kind.
func approval() *cardflow.Workflow {
	return &cardflow.Workflow{
		WorkflowName:         "Purchase approval",
		WorkflowIntegrations: obj{"erp": obj{"type": "SAP", "base_url": "https://sap.example.com", "client": "100", "auth": obj{"type": "basic", "secret": "sap-prod"}}},
		WorkflowSteps: []cardflow.Step{
			step("start", "trigger", obj{"kind": "REQUEST"}),
			step("po", "erp", obj{"service": "/sap/opu/odata/sap/API_PURCHASEORDER_PROCESS_SRV", "entity": "A_PurchaseOrder('{{ input.po }}')"}),
			step("big", "condition", nil),
			step("ask", "card", obj{"card_id": "C1", "data": obj{"amount": "{{ input.amount }}"}, "timeout": "P2D"}),
			step("boss", "approval", obj{"card_id": "C1", "approvers": []any{"{{ input.manager }}", "cfo@example.com"}, "policy": "all", "forbid_self_approval": "{{ input.requester }}"}),
			step("sap", "wait", obj{"timeout": "PT4H"}),
			step("nap", "delay", obj{"duration": "PT5M"}),
			step("sum", "transform", obj{"output": obj{"po": "{{ input.po }}"}}),
			step("hook", "http", obj{"method": "POST", "url": "https://hooks.example.com/{{ execution.id }}", "body": "{{ steps.sum.output }}"}),
			step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.sum.output }}"}),
			step("fail", "end", obj{"status": "FAILED"}),
		},
		WorkflowConnections: []cardflow.Connection{
			{From: "start", To: "po"}, {From: "po", To: "big"}, {From: "po", To: "fail", On: "error"},
			{From: "big", To: "ask", When: "input.amount > 1000"}, {From: "big", To: "nap"},
			{From: "ask", To: "boss"}, {From: "ask", To: "fail", On: "timeout"},
			{From: "boss", To: "sap"}, {From: "boss", To: "fail", On: "rejected"}, {From: "boss", To: "fail", On: "timeout"},
			{From: "sap", To: "sum"}, {From: "sap", To: "fail", On: "timeout"},
			{From: "nap", To: "sum"}, {From: "sum", To: "hook"},
			{From: "hook", To: "done"}, {From: "hook", To: "fail", On: "error"},
		},
	}
}

func TestApprovalUsesEveryKind(t *testing.T) {
	t.Parallel()
	w := approval()
	if err := w.ValidateDefinition(steps.Kinds); err != nil {
		t.Fatalf("got %v, want a valid workflow", err)
	}
	used := map[string]bool{}
	for _, s := range w.WorkflowSteps {
		used[s.Type] = true
	}
	for _, name := range steps.Kinds.Names() {
		if !used[name] {
			t.Errorf("kind %q: no step of the workflow uses it", name)
		}
	}
}

// TestUnknownTypeListsKinds: the definition rules know the kinds only from
// the registry, so its names are what a wrong type is told to use.
func TestUnknownTypeListsKinds(t *testing.T) {
	t.Parallel()
	w := approval()
	w.WorkflowSteps[2].Type = "loop"
	names := steps.Kinds.Names()
	want := `workflow_steps[2] (id "big"): unknown type "loop"; use ` + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	if got := cardflow.ErrorMessage(w.ValidateDefinition(steps.Kinds)); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := strings.Join(names, " "), "trigger http erp transform condition card approval wait delay end"; got != want {
		t.Errorf("got kinds %q, want %q", got, want)
	}
}

func TestTraits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		role  cardflow.StepRole
		exits string
	}{
		{"trigger", cardflow.RoleTrigger, ""},
		{"http", cardflow.RoleTask, "error"},
		{"erp", cardflow.RoleTask, "error"},
		{"transform", cardflow.RoleTask, ""},
		{"condition", cardflow.RoleCondition, ""},
		{"card", cardflow.RoleTask, "error timeout"},
		{"approval", cardflow.RoleTask, "rejected timeout error"},
		{"wait", cardflow.RoleTask, "timeout"},
		{"delay", cardflow.RoleTask, ""},
		{"end", cardflow.RoleEnd, ""},
	} {
		k, ok := steps.Kinds.Kind(tc.name)
		if !ok {
			t.Errorf("kind %q is not registered", tc.name)
			continue
		}
		if got := k.Traits().Role; got != tc.role {
			t.Errorf("%s: got role %d, want %d", tc.name, got, tc.role)
		}
		if got := strings.Join(k.Traits().Exits, " "); got != tc.exits {
			t.Errorf("%s: got exits %q, want %q", tc.name, got, tc.exits)
		}
		if got, want := k.Traits().Delivers, tc.name == "card" || tc.name == "approval"; got != want {
			t.Errorf("%s: got delivers %v, want %v", tc.name, got, want)
		}
	}
}

func TestNewRegistry(t *testing.T) {
	t.Parallel()
	if _, err := steps.NewRegistry(steps.Wait, steps.End, steps.Wait); err == nil || !strings.Contains(err.Error(), `"wait" is registered twice`) {
		t.Errorf("got %v, want the second wait refused", err)
	}
	if _, err := steps.NewRegistry(steps.Kind{}); err == nil {
		t.Error("got no error for a kind without a name, want one")
	}
	r, err := steps.NewRegistry(steps.Trigger, steps.End)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Lookup("wait"); ok {
		t.Error("got wait from a registry without it")
	}
}
