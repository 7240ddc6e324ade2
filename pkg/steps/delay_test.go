package steps_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/steps"
)

func TestDelayConfig(t *testing.T) {
	t.Parallel()
	testConfigs(t, steps.Delay, []configCase{
		{name: "duration", config: obj{"duration": "PT5M"}},
		{name: "until", config: obj{"until": "timestamp(input.at)"}},
		{name: "neither", config: obj{}, want: "a delay step needs exactly one of config.duration and config.until"},
		{name: "both", config: obj{"duration": "PT5M", "until": "input.at"}, want: "a delay step needs exactly one of config.duration and config.until"},
		{name: "bad duration", config: obj{"duration": "5m"}, want: `config.duration: "5m" is not an ISO 8601 duration`},
		{name: "until not a string", config: obj{"until": 1700000000000.0}, want: "config.until must be a string"},
		{name: "bad until", config: obj{"until": "input.("}, want: "config.until: ", by: checking},
	})
}
