package steps_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/steps"
)

func TestCardConfig(t *testing.T) {
	t.Parallel()
	testConfigs(t, steps.Card, []configCase{
		{name: "latest version", config: obj{"card_id": "C1"}},
		{name: "everything", config: obj{"card_id": "C1", "card_version": 2.0, "data": obj{"amount": "{{ input.amount }}"}, "timeout": "PT72H", "delivery": obj{"type": "outbox"}}},
		{name: "null data", config: obj{"card_id": "C1", "data": nil}},
		{name: "no card_id", config: obj{"timeout": "PT1H"}, want: "config.card_id is required for a card step"},
		{name: "card_id not a string", config: obj{"card_id": 7}, want: "config.card_id must be a string"},
		{name: "version 0", config: obj{"card_id": "C1", "card_version": 0.0}, want: "config.card_version must be a positive whole number"},
		{name: "version 1.5", config: obj{"card_id": "C1", "card_version": 1.5}, want: "config.card_version must be a positive whole number"},
		{name: "version as text", config: obj{"card_id": "C1", "card_version": "2"}, want: "config.card_version must be a positive whole number"},
		{name: "data not an object", config: obj{"card_id": "C1", "data": "{{ input }}"}, want: "config.data must be an object"},
		{name: "bad timeout", config: obj{"card_id": "C1", "timeout": "72h"}, want: `config.timeout: "72h" is not an ISO 8601 duration`},
		{name: "delivery not an object", config: obj{"card_id": "C1", "delivery": "bot"}, want: `config.delivery must be an object such as {"type": "bot", "conversation_id": "..."}`},
		{name: "bad data template", config: obj{"card_id": "C1", "data": obj{"a": "{{ input.a + }}"}}, want: "config.data: ", by: checking},
	})
}

// cardVersions is a card store whose latest active version the test sets.
type cardVersions struct{ latest *cardflow.Card }

func (c *cardVersions) GetCard(context.Context, string, string, int) (*cardflow.Card, error) {
	return c.latest, nil
}

func (c *cardVersions) GetLatestActiveCard(context.Context, string, string) (*cardflow.Card, error) {
	return c.latest, nil
}

// One card step sends whichever version is latest when it runs, though it
// compiles a version's template once.
func TestCardStepSendsTheLatestVersion(t *testing.T) {
	t.Parallel()
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	step, err := steps.Card.Compile(env, obj{"card_id": "C1", "data": obj{"amount": "{{ input.amount }}"}})
	if err != nil {
		t.Fatal(err)
	}
	card := func(version int, text string) *cardflow.Card {
		return &cardflow.Card{CardID: "C1", CardVersion: version, OrganizationID: "org-a", CreatedOn: int64(version),
			CardPayload: obj{"type": "AdaptiveCard", "version": "1.5", "body": []any{obj{"type": "TextBlock", "text": text}}}}
	}
	store := &cardVersions{}
	for _, tc := range []struct {
		card   *cardflow.Card
		amount float64
		want   string
	}{
		{card(1, "Amount ${amount}"), 100, "Amount 100"},
		{card(1, "Amount ${amount}"), 200, "Amount 200"},
		{card(2, "Total ${amount}"), 300, "Total 300"},
		{card(1, "Amount ${amount}"), 400, "Amount 400"},
	} {
		store.latest = tc.card
		run := &steps.Run{
			Execution: &cardflow.Execution{WorkflowExecutionID: "ex-1", OrganizationID: "org-a"}, StepID: "ask",
			Vars: expr.Vars{Input: obj{"amount": tc.amount}}, Cards: store, Now: time.Now,
		}
		out := step.Run(context.Background(), run)
		if out.Reason != "" {
			t.Fatalf("version %d: %s", tc.card.CardVersion, out.Reason)
		}
		d := &recordingDeliverer{}
		run.Deliverer, run.Prepared = d, out.Prepared
		if err := step.(steps.Waiter).Open(context.Background(), run); err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(d.got.CardPayload["body"])
		if got, want := string(body), `[{"text":"`+tc.want+`","type":"TextBlock"}]`; got != want || d.got.CardVersion != tc.card.CardVersion {
			t.Errorf("version %d: got version %d %s, want %s", tc.card.CardVersion, d.got.CardVersion, got, want)
		}
	}
}

type recordingDeliverer struct{ got *cardflow.Delivery }

func (r *recordingDeliverer) Deliver(_ context.Context, d *cardflow.Delivery) error {
	r.got = d
	return nil
}
