package cardflow_test

import (
	"reflect"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func TestBotConversations(t *testing.T) {
	t.Parallel()
	bot := map[string]any{"type": "bot", "service_url": "https://smba.trafficmanager.net/emea/", "conversation_id": "19:team"}
	step := func(id string, delivery any) cardflow.Step {
		cfg := map[string]any{}
		if delivery != nil {
			cfg["delivery"] = delivery
		}
		return cardflow.Step{ID: id, Config: cfg}
	}
	for _, tt := range []struct {
		name         string
		integrations map[string]any
		steps        []cardflow.Step
		want         []cardflow.NamedConversation
	}{
		{name: "none", steps: []cardflow.Step{step("a", nil)}},
		{name: "webhook", integrations: map[string]any{"teams": map[string]any{"type": "webhook"}}, steps: []cardflow.Step{step("a", map[string]any{"conversation_id": "19:x"})}},
		{name: "the workflow's", integrations: map[string]any{"teams": bot}, steps: []cardflow.Step{step("a", nil)},
			want: []cardflow.NamedConversation{{ConversationID: "19:team", Where: "workflow_integrations.teams"}}},
		{name: "a step's, once each", integrations: map[string]any{"teams": bot},
			steps: []cardflow.Step{step("a", map[string]any{"conversation_id": "19:other"}), step("b", map[string]any{"conversation_id": "19:other"}), step("c", map[string]any{"type": "outbox"})},
			want:  []cardflow.NamedConversation{{ConversationID: "19:team", Where: "workflow_integrations.teams"}, {ConversationID: "19:other", Where: `workflow_steps[0] (id "a") config.delivery`}}},
		{name: "a step's bot alone", steps: []cardflow.Step{step("a", bot)},
			want: []cardflow.NamedConversation{{ConversationID: "19:team", Where: `workflow_steps[0] (id "a") config.delivery`}}},
	} {
		w := &cardflow.Workflow{WorkflowIntegrations: tt.integrations, WorkflowSteps: tt.steps}
		if got := w.BotConversations(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
