package steps_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/steps"
)

// validConfigs holds a config each kind accepts.
var validConfigs = map[string]obj{
	"trigger":   {"kind": "SCHEDULE", "expression": "rate(1 hour)", "timezone": "Europe/Berlin"},
	"http":      {"url": "https://example.com/hook", "method": "POST", "auth": obj{"type": "bearer", "secret": "hook-token"}},
	"erp":       {"service": "/sap/opu/odata/sap/API_PURCHASEORDER_PROCESS_SRV", "entity": "A_PurchaseOrder('{{ input.po }}')"},
	"transform": {"output": obj{"total": "{{ input.amount }}"}},
	"condition": {},
	"card":      {"card_id": "c1", "card_version": 2, "timeout": "PT1H"},
	"approval": {"card_id": "c1", "approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "quorum", "count": 1,
		"escalation": obj{"after": "PT2H", "to": []any{"lead@example.com"}}},
	"wait":  {"timeout": "PT1H"},
	"delay": {"duration": "PT5M"},
	"end":   {"status": "SUCCEEDED"},
}

// TestUnknownConfigKeys: every kind refuses a key it does not read on
// save, naming it and the keys it knows, and still runs a stored version
// that has one.
func TestUnknownConfigKeys(t *testing.T) {
	integrations := obj{"erp": obj{}}
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		kind, key, want string
		nested          string // the object the key is put in, "" for the config
	}{
		{kind: "trigger", key: "cron", want: `unknown config key "cron" (known: expression, kind, timezone)`},
		{kind: "http", key: "headers_", want: `unknown config key "headers_" (known: auth, body, headers, idempotency_key, method, query, timeout, url)`},
		{kind: "erp", key: "url", want: `unknown config key "url" (known: auth, body, entity, headers, idempotency_key, method, pages, query, service, timeout)`},
		{kind: "transform", key: "input", want: `unknown config key "input" (known: output)`},
		{kind: "condition", key: "when", want: `unknown config key "when" (a condition step has no config)`},
		{kind: "card", key: "approvers", want: `unknown config key "approvers" (known: card_id, card_version, data, delivery, timeout)`},
		{kind: "approval", key: "channels", want: `unknown config key "channels" (known: allow_reassign, approvers, card_id, card_version, count, data, delivery, due, escalation, forbid_self_approval, policy, remind_when_due, reminders, timeout)`},
		{kind: "approval", nested: "escalation", key: "cc", want: `unknown config key "escalation.cc" (known: after, mode, to)`},
		{kind: "wait", key: "until", want: `unknown config key "until" (known: timeout)`},
		{kind: "delay", key: "timeout", want: `unknown config key "timeout" (known: duration, until)`},
		{kind: "end", key: "exit", want: `unknown config key "exit" (known: output, status)`},
	} {
		t.Run(tt.kind+" "+tt.key, func(t *testing.T) {
			kind, ok := steps.Kinds.Kind(tt.kind)
			if !ok {
				t.Fatalf("no kind %q", tt.kind)
			}
			valid := validConfigs[tt.kind]
			if err := kind.ValidateConfig(valid, integrations); err != nil {
				t.Fatalf("the valid config: got %v, want no error", err)
			}
			config := deepCopy(valid).(obj)
			at := config
			if tt.nested != "" {
				at = config[tt.nested].(obj)
			}
			at[tt.key] = "x"
			err := kind.ValidateConfig(config, integrations)
			if got := errString(err); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if _, err := kind.Compile(env, config); err != nil {
				t.Errorf("compile a stored config with the key: got %v, want no error", err)
			}
		})
	}
}

// TestEveryKindHasAValidConfig keeps validConfigs in step with the
// registry.
func TestEveryKindHasAValidConfig(t *testing.T) {
	for _, name := range steps.Kinds.Names() {
		if _, ok := validConfigs[name]; !ok {
			t.Errorf("kind %q: no config in validConfigs", name)
		}
	}
}

// TestSchemaKnowsTheConfigFields: the keys a kind's schema allows are the
// JSON fields its config decodes, so the schema cannot refuse a key the
// kind reads, nor document one it ignores.
func TestSchemaKnowsTheConfigFields(t *testing.T) {
	for _, name := range steps.Kinds.Names() {
		kind, _ := steps.Kinds.Kind(name)
		props, _ := kind.Schema()["properties"].(map[string]steps.Schema)
		got := slices.Sorted(func(yield func(string) bool) {
			for k := range props {
				if !yield(k) {
					return
				}
			}
		})
		want := steps.ConfigFields(kind)
		if !slices.Equal(got, want) {
			t.Errorf("kind %q: schema keys %q, want the config's fields %q", name, got, want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case obj:
		out := obj{}
		for k, item := range v {
			out[k] = deepCopy(item)
		}
		return out
	case []any:
		return slices.Clone(v)
	}
	return v
}

// TestTeamsProfileSchema: the document schema's Teams profile knows the
// keys the definition rules take, and no other.
func TestTeamsProfileSchema(t *testing.T) {
	defs := steps.Kinds.DocumentSchema()["$defs"].(map[string]steps.Schema)
	teams := defs["Workflow"]["properties"].(map[string]steps.Schema)["workflow_integrations"]["properties"].(steps.Schema)["teams"].(steps.Schema)
	props := teams["properties"].(map[string]steps.Schema)
	value := func(key string) any {
		if key == "approver_webhooks" {
			return obj{}
		}
		return "outbox"
	}
	for key := range props {
		w := approval()
		w.WorkflowIntegrations["teams"] = obj{key: value(key)}
		if err := w.ValidateDefinition(steps.Kinds); err != nil && strings.Contains(err.Error(), "unknown key") {
			t.Errorf("key %q: got %v, want the definition rules to know it", key, err)
		}
	}
	w := approval()
	w.WorkflowIntegrations["teams"] = obj{"channel": "x"}
	if err := w.ValidateDefinition(steps.Kinds); err == nil || !strings.Contains(err.Error(), `unknown key "channel"`) {
		t.Errorf("got %v, want an unknown key", err)
	}
	if teams["additionalProperties"] != false {
		t.Errorf("additionalProperties: got %v, want false", teams["additionalProperties"])
	}
}

// TestRegistryRefusesABadSchema: a kind whose schema does not compile is
// refused when the registry is made, not on the first save.
func TestRegistryRefusesABadSchema(t *testing.T) {
	bad := steps.DefineBroken("broken", steps.Schema{"type": 5})
	if _, err := steps.NewRegistry(steps.Trigger, bad); err == nil || !strings.Contains(err.Error(), `the config schema of kind "broken"`) {
		t.Errorf("got %v, want the schema refused", err)
	}
}
