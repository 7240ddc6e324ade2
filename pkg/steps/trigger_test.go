package steps_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/steps"
)

func TestTriggerConfig(t *testing.T) {
	t.Parallel()
	testConfigs(t, steps.Trigger, []configCase{
		{name: "request", config: obj{"kind": "REQUEST"}},
		{name: "schedule", config: obj{"kind": "SCHEDULE", "expression": "cron(0 8 ? * MON-FRI *)", "timezone": "Europe/Berlin"}},
		{name: "schedule in UTC", config: obj{"kind": "SCHEDULE", "expression": "rate(5 minutes)"}},
		{name: "no config", config: nil, want: "config.kind is required for a trigger step"},
		{name: "null kind", config: obj{"kind": nil}, want: "config.kind is required for a trigger step"},
		{name: "blank kind", config: obj{"kind": " "}, want: "config.kind must not be empty"},
		{name: "kind not a string", config: obj{"kind": 1}, want: "config.kind must be a string"},
		{name: "unknown kind", config: obj{"kind": "EVENT"}, want: `config.kind must be REQUEST or SCHEDULE, not "EVENT"`},
		{name: "schedule without expression", config: obj{"kind": "SCHEDULE"}, want: "config.expression is required for a trigger step"},
		{name: "not an expression", config: obj{"kind": "SCHEDULE", "expression": "every day"}, want: `config.expression "every day" must be cron(...), rate(...) or at(...)`},
		{name: "unknown zone", config: obj{"kind": "SCHEDULE", "expression": "rate(5 minutes)", "timezone": "Mars/Base"}, want: `config.timezone "Mars/Base" is not an IANA time zone`},
		{name: "cron EventBridge refuses", config: obj{"kind": "SCHEDULE", "expression": "cron(0 8 * * MON *)"}, want: "config.expression: ", by: checking},
	})
}
