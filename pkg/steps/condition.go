package steps

import (
	"context"
	"fmt"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// Condition leaves by the first of its connections whose when holds, else
// by its default connection; its output names the step it chose.
var Condition = Define[conditionConfig]("condition", cardflow.StepTraits{Role: cardflow.RoleCondition, Local: true}, conditionSchema)

// conditionConfig is empty: a condition's expressions are on its
// connections, which the engine compiles into Run.Branches.
type conditionConfig struct{}

func (*conditionConfig) Validate() error { return nil }

func (*conditionConfig) Check(*expr.Env) (Step, error) { return conditionStep{}, nil }

type conditionStep struct{}

func (conditionStep) Run(ctx context.Context, r *Run) Outcome {
	for _, b := range r.Branches {
		ok, err := b.When.EvalBool(ctx, r.Vars)
		if err != nil {
			return Outcome{Reason: fmt.Sprintf("when of the connection to %s: %v", b.To, err)}
		}
		if ok {
			return Outcome{Output: map[string]any{"next": b.To}, Next: b.To}
		}
	}
	return Outcome{Output: map[string]any{"next": r.Next}}
}

var conditionSchema = object("Leaves by the first connection whose when holds, else by its default connection; it has no config.", nil, map[string]Schema{})
