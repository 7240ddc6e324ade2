package steps

import (
	"context"
	"errors"
	"fmt"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// Transform builds its output from a template value.
var Transform = Define[transformConfig]("transform", cardflow.StepTraits{Local: true}, transformSchema)

type transformConfig struct {
	// Output is required, though it may be null.
	Output optional[any] `json:"output"`
}

func (c *transformConfig) Validate() error {
	if !c.Output.set {
		return errors.New("config.output is required for a transform step")
	}
	return nil
}

func (c *transformConfig) Check(env *expr.Env) (Step, error) {
	v, err := env.CompileValue(c.Output.value)
	if err != nil {
		return nil, fmt.Errorf("config.output: %w", err)
	}
	return &transformStep{output: v}, nil
}

type transformStep struct{ output *expr.Value }

func (s *transformStep) Run(ctx context.Context, r *Run) Outcome {
	v, err := s.output.Eval(ctx, r.Vars)
	if err != nil {
		return Outcome{Reason: "config.output: " + err.Error()}
	}
	return Outcome{Output: v}
}

var transformSchema = object("Builds its output from a template value.", nil, map[string]Schema{
	"output": anyValue("Required: the output, a value whose strings may hold {{ }} templates."),
})
