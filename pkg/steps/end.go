package steps

import (
	"context"
	"fmt"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// End finishes the execution, SUCCEEDED unless its status says FAILED,
// with its output as the execution's output.
var End = Define[endConfig]("end", cardflow.StepTraits{Role: cardflow.RoleEnd, Local: true}, endSchema)

type endConfig struct {
	Status string `json:"status"`
	Output any    `json:"output"`
}

func (c *endConfig) Validate() error {
	if c.Status != "" && c.Status != cardflow.ExecSucceeded && c.Status != cardflow.ExecFailed {
		return fmt.Errorf("config.status must be SUCCEEDED or FAILED, not %q", c.Status)
	}
	return nil
}

func (c *endConfig) Check(env *expr.Env) (Step, error) {
	s := &endStep{status: c.Status}
	if s.status == "" {
		s.status = cardflow.ExecSucceeded
	}
	var err error
	if s.output, err = compileValue(env, "output", c.Output); err != nil {
		return nil, err
	}
	return s, nil
}

type endStep struct {
	status string
	output *expr.Value // nil: no output
}

func (s *endStep) Run(ctx context.Context, r *Run) Outcome {
	if s.output == nil {
		return Outcome{Finish: s.status}
	}
	v, err := s.output.Eval(ctx, r.Vars)
	if err != nil {
		return Outcome{Finish: s.status, Reason: "config.output: " + err.Error()}
	}
	return Outcome{Finish: s.status, Output: v}
}

var endSchema = object("Finishes the execution.", nil, map[string]Schema{
	"status": enum("SUCCEEDED (default) or FAILED.", cardflow.ExecSucceeded, cardflow.ExecFailed),
	"output": anyValue("The execution's output, a value whose strings may hold {{ }} templates."),
})
