package steps_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/steps"
)

func TestConditionConfig(t *testing.T) {
	t.Parallel()
	testConfigs(t, steps.Condition, []configCase{
		{name: "none", config: nil},
		// Refused on save, so a misplaced when does not go unseen; versions
		// saved before still run.
		{name: "unknown key", config: obj{"note": "its expressions are on its connections"}, want: `unknown config key "note" (a condition step has no config)`, by: saving},
	})
}
