package steps_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/steps"
)

func TestApprovalTimersConfig(t *testing.T) {
	t.Parallel()
	base := func(extra obj) obj {
		c := obj{"card_id": "C1", "approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all", "timeout": "PT72H"}
		for k, v := range extra {
			c[k] = v
		}
		return c
	}
	esc := func(after any, to any, mode any) obj {
		e := obj{"after": after, "to": to}
		if mode != nil {
			e["mode"] = mode
		}
		return base(obj{"escalation": e})
	}
	lead := []any{"lead@example.com"}
	testConfigs(t, steps.Approval, []configCase{
		{name: "reminders", config: base(obj{"reminders": []any{"PT24H", "PT48H"}})},
		{name: "escalation add", config: esc("PT48H", lead, "add")},
		{name: "escalation replace, templated", config: esc("PT48H", []any{"{{ input.manager }}"}, "replace")},
		{name: "escalation mode defaults to add", config: esc("PT48H", lead, nil)},
		{name: "no timeout: any time", config: obj{"card_id": "C1", "approvers": []any{"ann@example.com"}, "policy": "first", "reminders": []any{"P30D"}, "escalation": obj{"after": "P60D", "to": lead}}},
		{name: "reminders not a list", config: base(obj{"reminders": "PT24H"}), want: "config.reminders must be a list of ISO 8601 durations"},
		{name: "reminder not a duration", config: base(obj{"reminders": []any{"PT24H", "two days"}}), want: `config.reminders[1]: "two days" is not an ISO 8601 duration`},
		{name: "reminder empty", config: base(obj{"reminders": []any{""}}), want: "config.reminders[0] is empty"},
		{name: "reminders out of order", config: base(obj{"reminders": []any{"PT48H", "PT24H"}}), want: "config.reminders[1] PT24H is not later than config.reminders[0] PT48H"},
		{name: "reminder at the timeout", config: base(obj{"reminders": []any{"PT72H"}}), want: "config.reminders[0] PT72H is not before the step's timeout PT72H, so it would never fire"},
		{name: "too many reminders", config: base(obj{"reminders": []any{"PT1H", "PT2H", "PT3H", "PT4H", "PT5H", "PT6H", "PT7H", "PT8H", "PT9H", "PT10H", "PT11H"}}), want: "config.reminders lists 11 reminders; the limit is 10"},
		{name: "escalation not an object", config: base(obj{"escalation": "PT48H"}), want: "config.escalation must be an object such as"},
		{name: "escalation without after", config: esc("", lead, "add"), want: "config.escalation.after is required"},
		{name: "escalation after not a duration", config: esc("soon", lead, "add"), want: `config.escalation.after: "soon" is not an ISO 8601 duration`},
		{name: "escalation after the timeout", config: esc("P4D", lead, "add"), want: "config.escalation.after P4D is not before the step's timeout PT72H"},
		{name: "escalation unknown mode", config: esc("PT48H", lead, "swap"), want: `config.escalation.mode must be add or replace, not "swap"`},
		{name: "escalation to nobody", config: esc("PT48H", []any{}, "add"), want: "config.escalation.to must list at least one person"},
		{name: "escalation to not a list", config: esc("PT48H", "lead@example.com", "add"), want: "config.escalation.to must be a list of people"},
		{name: "escalation to not a person", config: esc("PT48H", []any{"lead"}, "add"), want: `config.escalation.to[0] "lead" is neither an Entra ID object id nor a UPN or e-mail address`},
		{name: "escalation to blank", config: esc("PT48H", []any{" "}, "add"), want: "config.escalation.to[0] is empty"},
		{name: "due", config: base(obj{"due": "PT48H"})},
		{name: "due with a reminder then", config: base(obj{"due": "PT48H", "remind_when_due": true, "reminders": []any{"PT24H", "PT48H"}})},
		{name: "due without a timeout", config: obj{"card_id": "C1", "approvers": []any{"ann@example.com"}, "policy": "first", "due": "P30D"}},
		{name: "due not a duration", config: base(obj{"due": "soon"}), want: `config.due: "soon" is not an ISO 8601 duration`},
		{name: "due at the timeout", config: base(obj{"due": "PT72H"}), want: "config.due PT72H is not before the step's timeout PT72H: an approval is due before it times out"},
		{name: "due after the timeout", config: base(obj{"due": "P4D"}), want: "config.due P4D is not before the step's timeout PT72H"},
		{name: "remind_when_due without due", config: base(obj{"remind_when_due": true}), want: "config.remind_when_due needs config.due"},
		{name: "remind_when_due not a bool", config: base(obj{"due": "PT1H", "remind_when_due": "yes"}), want: "config.remind_when_due must be true or false"},
		{name: "remind_when_due past the reminders' limit", config: base(obj{"due": "PT12H", "remind_when_due": true, "reminders": []any{"PT1H", "PT2H", "PT3H", "PT4H", "PT5H", "PT6H", "PT7H", "PT8H", "PT9H", "PT10H"}}),
			want: "config.reminders lists 10 reminders and config.remind_when_due adds one; the limit is 10"},
		{name: "escalation bad template", config: esc("PT48H", []any{"{{ input. }}"}, "add"), want: "config.escalation.to[0]: ", by: checking},
	})
}
