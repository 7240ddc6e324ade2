package cardflow_test

import (
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func TestValidateTeamsDelivery(t *testing.T) {
	t.Parallel()
	bot := map[string]any{"type": "bot", "service_url": "https://smba.trafficmanager.net/emea/", "conversation_id": "19:abc@thread.v2", "tenant_id": "t1"}
	tests := []struct {
		name         string
		integrations map[string]any
		delivery     any    // the approve step's config.delivery; nil leaves it out
		want         string // substring of the error message; "" means valid
	}{
		{"none is the outbox", nil, nil, ""},
		{"webhook", map[string]any{"teams": map[string]any{"type": "webhook", "webhook_secret": "approvals-hook"}}, nil, ""},
		{"bot", map[string]any{"teams": bot}, nil, ""},
		{"step overrides conversation", map[string]any{"teams": bot}, map[string]any{"conversation_id": "19:other@thread.v2"}, ""},
		{"step chooses outbox", map[string]any{"teams": map[string]any{"type": "webhook"}}, map[string]any{"type": "outbox"}, ""},
		{"step alone", nil, map[string]any{"type": "webhook", "webhook_secret": "hook"}, ""},
		{"profile not an object", map[string]any{"teams": "webhook"}, nil, "workflow_integrations.teams must be an object"},
		{"unknown type", map[string]any{"teams": map[string]any{"type": "email"}}, nil, `workflow_integrations.teams: type must be outbox, webhook or bot, not "email"`},
		{"unknown key", map[string]any{"teams": map[string]any{"type": "webhook", "webhook_url": "https://x"}}, nil, `unknown key "webhook_url"`},
		{"not a string", map[string]any{"teams": map[string]any{"type": "bot", "tenant_id": 5}}, nil, "tenant_id must be a string"},
		{"webhook without secret", map[string]any{"teams": map[string]any{"type": "webhook"}}, nil, `(id "approve"): its delivery (workflow_integrations.teams with config.delivery over it) is a webhook without webhook_secret`},
		{"webhook bad secret name", nil, map[string]any{"type": "webhook", "webhook_secret": "https://example.com/hook"}, "is not a secret name"},
		{"bot without service url", nil, map[string]any{"type": "bot", "conversation_id": "19:x"}, "without an https service_url"},
		{"bot with http service url", nil, map[string]any{"type": "bot", "service_url": "http://smba.trafficmanager.net/", "conversation_id": "19:x"}, "without an https service_url"},
		{"bot without conversation", nil, map[string]any{"type": "bot", "service_url": "https://smba.trafficmanager.net/"}, "without conversation_id"},
		{"delivery not an object", nil, "bot", "config.delivery must be an object"},
		{"delivery bad key", nil, map[string]any{"channel": "x"}, `config.delivery: unknown key "channel"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := approval()
			w.WorkflowIntegrations = tt.integrations
			if tt.delivery != nil {
				w.WorkflowSteps[2].Config["delivery"] = tt.delivery
			}
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

func TestDeliveryOnOtherStep(t *testing.T) {
	t.Parallel()
	w := approval()
	w.WorkflowSteps[3].Config["delivery"] = map[string]any{"type": "bot"}
	err := w.ValidateDefinition(kinds)
	if got, want := cardflow.ErrorMessage(err), `workflow_steps[3] (id "done"): config.delivery applies to card steps only`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestTeamsProfile(t *testing.T) {
	t.Parallel()
	integrations := map[string]any{"teams": map[string]any{"type": "bot", "service_url": "https://s/", "conversation_id": "a"}}
	got := cardflow.TeamsProfile(integrations, map[string]any{"conversation_id": "b"})
	if got["type"] != "bot" || got["conversation_id"] != "b" || got["service_url"] != "https://s/" {
		t.Errorf("got %v, want the bot profile with conversation b", got)
	}
	if got := cardflow.TeamsProfile(nil, nil); got["type"] != cardflow.DeliveryOutbox {
		t.Errorf("got type %v, want outbox", got["type"])
	}
}
