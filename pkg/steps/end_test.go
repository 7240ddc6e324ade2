package steps_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/steps"
)

func TestEndConfig(t *testing.T) {
	t.Parallel()
	testConfigs(t, steps.End, []configCase{
		{name: "bare", config: nil},
		{name: "failed with output", config: obj{"status": "FAILED", "output": obj{"why": "{{ steps.check.output }}"}}},
		{name: "unknown status", config: obj{"status": "DONE"}, want: `config.status must be SUCCEEDED or FAILED, not "DONE"`},
		{name: "status not a string", config: obj{"status": true}, want: "config.status must be a string"},
		{name: "bad output template", config: obj{"output": "{{ input. }}"}, want: "config.output: ", by: checking},
	})
}
