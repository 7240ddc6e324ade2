package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
)

// refs has one card version and one conversation of org "org".
type refs struct{}

func (refs) GetCard(_ context.Context, org, id string, version int) (*cardflow.Card, error) {
	if org == "org" && id == "c1" && version == 1 {
		return &cardflow.Card{OrganizationID: org, CardID: id, CardVersion: version}, nil
	}
	return nil, cardflow.Errorf(cardflow.ENOTFOUND, "no card")
}

func (refs) GetConversation(_ context.Context, org, id string) (*cardflow.TeamsConversation, error) {
	if org == "org" && id == "19:general" {
		return &cardflow.TeamsConversation{}, nil
	}
	return nil, cardflow.Errorf(cardflow.ENOTFOUND, "no conversation")
}

// TestValidate: the pipeline saveWorkflow runs checks the version, then
// the cards and conversations it names, through the step kinds.
func TestValidate(t *testing.T) {
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	checker, err := engine.NewChecker(env)
	if err != nil {
		t.Fatal(err)
	}
	approvers := []any{"ann@example.com"}
	for _, tt := range []struct {
		name     string
		typ      string
		config   obj
		code     string
		wantText string
	}{
		{"card by version", "card", obj{"card_id": "c1", "card_version": 1}, "", ""},
		{"card latest is checked as version 1", "card", obj{"card_id": "c1"}, "", ""},
		{"card missing", "card", obj{"card_id": "c2"}, cardflow.ENOTFOUND,
			`workflow_steps[1] (id "ask"): config.card_id "c2" (version 1) names no card of this organization`},
		{"card version missing", "card", obj{"card_id": "c1", "card_version": 3}, cardflow.ENOTFOUND,
			`workflow_steps[1] (id "ask"): config.card_id "c1" (version 3) names no card of this organization`},
		{"approval card missing", "approval", obj{"card_id": "c2", "approvers": approvers, "policy": "first"}, cardflow.ENOTFOUND,
			`workflow_steps[1] (id "ask"): config.card_id "c2" (version 1) names no card of this organization`},
		{"unknown key before the lookups", "approval", obj{"card_id": "c2", "approvers": approvers, "policy": "first", "channels": "x"}, cardflow.EINVALID,
			`workflow_steps[1] (id "ask"): unknown config key "channels" (known: allow_reassign, approvers, card_id, card_version, count, data, delivery, due, escalation, forbid_self_approval, policy, remind_when_due, reminders, timeout)`},
		{"registered conversation", "card", obj{"card_id": "c1", "delivery": obj{"type": "bot", "conversation_id": "19:general", "service_url": "https://smba.trafficmanager.net/emea/"}}, "", ""},
		{"unregistered conversation", "card", obj{"card_id": "c1", "delivery": obj{"type": "bot", "conversation_id": "19:other", "service_url": "https://smba.trafficmanager.net/emea/"}}, cardflow.EINVALID,
			`workflow_steps[1] (id "ask") config.delivery: conversation "19:other" is not registered for this organization`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &cardflow.Workflow{
				OrganizationID: "org", WorkflowName: "w",
				WorkflowSteps: []cardflow.Step{
					step("start", "trigger", obj{"kind": "REQUEST"}),
					step("ask", tt.typ, tt.config),
					step("done", "end", obj{}),
				},
				WorkflowConnections: []cardflow.Connection{{From: "start", To: "ask"}, {From: "ask", To: "done"}},
			}
			err := checker.Validate(context.Background(), w, refs{})
			if got := cardflow.ErrorCode(err); err != nil && got != tt.code || err == nil && tt.code != "" {
				t.Fatalf("got %v (%s), want code %q", err, got, tt.code)
			}
			if tt.code == "" {
				return
			}
			if got := cardflow.ErrorMessage(err); !strings.HasPrefix(got, tt.wantText) {
				t.Errorf("got %q, want it to start with %q", got, tt.wantText)
			}
		})
	}
}
