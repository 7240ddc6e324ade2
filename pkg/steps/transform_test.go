package steps_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/steps"
)

func TestTransformConfig(t *testing.T) {
	t.Parallel()
	testConfigs(t, steps.Transform, []configCase{
		{name: "object", config: obj{"output": obj{"total": "{{ input.a + input.b }}"}}},
		{name: "null", config: obj{"output": nil}},
		{name: "no output", config: obj{}, want: "config.output is required for a transform step"},
		{name: "bad template", config: obj{"output": obj{"a": "{{ inpt.a }}"}}, want: "config.output: ", by: checking},
	})
}
