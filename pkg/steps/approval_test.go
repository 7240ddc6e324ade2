package steps_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/steps"
)

func TestApprovalConfig(t *testing.T) {
	t.Parallel()
	two := []any{"ann@example.com", "0f5e3c1a-2b4d-4e6f-8a9b-0c1d2e3f4a5b"}
	testConfigs(t, steps.Approval, []configCase{
		{name: "first", config: obj{"card_id": "C1", "approvers": two, "policy": "first"}},
		{name: "everything", config: obj{"card_id": "C1", "card_version": 2.0, "data": obj{"amount": "{{ input.amount }}"},
			"approvers": []any{"ann@example.com", "{{ steps.lookup.output.manager }}"}, "policy": "quorum", "count": 2.0,
			"forbid_self_approval": "{{ input.requester }}", "allow_reassign": true, "timeout": "PT72H", "delivery": obj{"type": "outbox"}}},
		{name: "all", config: obj{"card_id": "C1", "approvers": two, "policy": "all"}},
		{name: "sequential", config: obj{"card_id": "C1", "approvers": two, "policy": "sequential"}},
		{name: "templated count over listed", config: obj{"card_id": "C1", "approvers": []any{"{{ input.approvers }}"}, "policy": "quorum", "count": 3.0}},
		{name: "no card_id", config: obj{"approvers": two, "policy": "first"}, want: "config.card_id is required for an approval step"},
		{name: "bad card_version", config: obj{"card_id": "C1", "card_version": 0.0, "approvers": two, "policy": "first"}, want: "config.card_version must be a positive whole number"},
		{name: "bad timeout", config: obj{"card_id": "C1", "approvers": two, "policy": "first", "timeout": "3 days"}, want: `config.timeout: "3 days" is not an ISO 8601 duration`},
		{name: "no approvers", config: obj{"card_id": "C1", "policy": "first"}, want: "config.approvers must list at least one approver"},
		{name: "empty approvers", config: obj{"card_id": "C1", "approvers": []any{}, "policy": "first"}, want: "config.approvers must list at least one approver"},
		{name: "approvers not a list", config: obj{"card_id": "C1", "approvers": "ann@example.com", "policy": "first"}, want: "config.approvers must be a list of people"},
		{name: "approver not a string", config: obj{"card_id": "C1", "approvers": []any{7}, "policy": "first"}, want: "config.approvers must be a list of people"},
		{name: "blank approver", config: obj{"card_id": "C1", "approvers": []any{" "}, "policy": "first"}, want: "config.approvers[0] is empty"},
		{name: "not a person", config: obj{"card_id": "C1", "approvers": []any{"ann"}, "policy": "first"}, want: `config.approvers[0] "ann" is neither an Entra ID object id nor a UPN or e-mail address`},
		{name: "twice", config: obj{"card_id": "C1", "approvers": []any{"ann@example.com", "ANN@example.com"}, "policy": "first"}, want: `config.approvers[1] "ANN@example.com" is listed twice`},
		{name: "no policy", config: obj{"card_id": "C1", "approvers": two}, want: "config.policy is required for an approval step: first, all, quorum, sequential"},
		{name: "unknown policy", config: obj{"card_id": "C1", "approvers": two, "policy": "majority"}, want: `config.policy must be first, all, quorum, sequential, not "majority"`},
		{name: "quorum without count", config: obj{"card_id": "C1", "approvers": two, "policy": "quorum"}, want: "config.count is required with policy quorum"},
		{name: "count without quorum", config: obj{"card_id": "C1", "approvers": two, "policy": "all", "count": 1.0}, want: "config.count applies to policy quorum only"},
		{name: "count zero", config: obj{"card_id": "C1", "approvers": two, "policy": "quorum", "count": 0.0}, want: "config.count must be a positive whole number"},
		{name: "count a fraction", config: obj{"card_id": "C1", "approvers": two, "policy": "quorum", "count": 1.5}, want: "config.count must be a positive whole number"},
		{name: "count over approvers", config: obj{"card_id": "C1", "approvers": two, "policy": "quorum", "count": 3.0}, want: "config.count is 3, more than the 2 approvers listed"},
		{name: "allow_reassign not a bool", config: obj{"card_id": "C1", "approvers": two, "policy": "first", "allow_reassign": "yes"}, want: "config.allow_reassign must be true or false"},
		{name: "bad approver template", config: obj{"card_id": "C1", "approvers": []any{"{{ input. }}"}, "policy": "first"}, want: "config.approvers[0]: ", by: checking},
		{name: "bad self-approval template", config: obj{"card_id": "C1", "approvers": two, "policy": "first", "forbid_self_approval": "{{ input.( }}"}, want: "config.forbid_self_approval: ", by: checking},
	})
}
