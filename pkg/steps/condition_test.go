package steps_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/steps"
)

func TestConditionConfig(t *testing.T) {
	testConfigs(t, steps.Condition, []configCase{
		{name: "none", config: nil},
		{name: "ignored", config: obj{"note": "its expressions are on its connections"}},
	})
}
