package cardflow_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func TestParseTeamsTenants(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want map[string]string
		err  string
	}{
		{in: "", want: nil},
		{in: " , ", want: nil},
		{in: "t1=acme", want: map[string]string{"t1": "acme"}},
		{in: " t1 = acme , t2=globex,", want: map[string]string{"t1": "acme", "t2": "globex"}},
		{in: "t1=acme,t1=acme", err: "tenant t1 is mapped to acme and to acme"},
		{in: "t1=acme,t1=globex", err: "a tenant belongs to one organization"},
		{in: "t1", err: `"t1" is not tenant=organization`},
		{in: "=acme", err: "is not tenant=organization"},
		{in: "t1=", err: "is not tenant=organization"},
	} {
		got, err := cardflow.ParseTeamsTenants(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: got %v, %v, want an error mentioning %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
}

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
