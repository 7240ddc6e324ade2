package engine

import (
	"errors"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// Checker compiles the expressions of workflow versions without running
// them: what a process that saves workflows but runs no executions needs
// (app.WithChecker).
type Checker struct{ env *expr.Env }

// NewChecker returns a Checker over env.
func NewChecker(env *expr.Env) (*Checker, error) {
	if env == nil {
		return nil, errors.New("engine: expression environment is required")
	}
	return &Checker{env: env}, nil
}

// Check is Engine.Check.
func (c *Checker) Check(w *cardflow.Workflow) error {
	if _, err := compile(c.env, w.WorkflowSteps, w.WorkflowConnections); err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "%v", err)
	}
	return nil
}
