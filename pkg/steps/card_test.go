package steps_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/steps"
)

func TestCardConfig(t *testing.T) {
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
