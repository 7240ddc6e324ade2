package steps_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/steps"
)

func TestWaitConfig(t *testing.T) {
	t.Parallel()
	testConfigs(t, steps.Wait, []configCase{
		{name: "for ever", config: nil},
		{name: "with timeout", config: obj{"timeout": "P1W"}},
		{name: "timeout not a string", config: obj{"timeout": 3600}, want: "config.timeout must be a string"},
		{name: "zero timeout", config: obj{"timeout": "PT0S"}, want: `config.timeout: "PT0S" must be longer than zero`},
		{name: "months", config: obj{"timeout": "P1M"}, want: `config.timeout: "P1M" is not an ISO 8601 duration`},
	})
}
