package engine

import (
	"errors"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/steps"
)

// Checker checks workflow versions without running them: what a process
// that saves workflows but runs no executions needs (app.WithChecker).
type Checker struct{ env *expr.Env }

// NewChecker returns a Checker over env.
func NewChecker(env *expr.Env) (*Checker, error) {
	if env == nil {
		return nil, errors.New("engine: expression environment is required")
	}
	return &Checker{env: env}, nil
}

// Check is Engine.Check.
func (c *Checker) Check(w *cardflow.Workflow) error { return check(c.env, w) }

// check validates a workflow version with the registered step kinds: its
// graph and each step's config (cardflow.ValidateDefinition), then its
// expressions and templates, then its SAP profile.
func check(env *expr.Env, w *cardflow.Workflow) error {
	if err := w.ValidateDefinition(steps.Kinds); err != nil {
		return err
	}
	if _, err := compile(env, w.WorkflowSteps, w.WorkflowConnections); err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "%v", err)
	}
	if err := checkIntegrations(w); err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "%v", err)
	}
	return nil
}
