package engine

import (
	"errors"
	"fmt"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/steps"
)

// graph is a workflow version compiled for running: every step's config
// decoded and its expressions and templates parsed once, every exit
// resolved.
type graph struct {
	trigger string
	steps   map[string]*node
}

type node struct {
	step cardflow.Step
	run  steps.Step
	// waiter is run as a Waiter, for steps that wait for a resume.
	waiter steps.Waiter
	// next is the default exit, "" for end steps.
	next string
	// branches are the condition's `when` exits, in definition order.
	branches []steps.Branch
	// exits are the non-success exits by name (error, timeout).
	exits map[string]string
	// local: the step's Run has no effect outside the execution
	// (cardflow.StepTraits.Local).
	local bool
}

// StepError is a definition error of one step or connection, found when the
// workflow is compiled.
type StepError struct {
	Where string
	Err   error
}

func (e *StepError) Error() string { return e.Where + ": " + e.Err.Error() }

// compile builds the graph of a definition with the registered step kinds.
// The definition has passed ValidateDefinition; compile adds the
// expressions.
func compile(env *expr.Env, defs []cardflow.Step, conns []cardflow.Connection) (*graph, error) {
	g := &graph{steps: make(map[string]*node, len(defs))}
	for i, st := range defs {
		n := &node{step: st, exits: map[string]string{}}
		kind, ok := steps.Kinds.Kind(st.Type)
		if !ok {
			// Only a version saved with a kind this build lacks gets here:
			// its executions fail in that step rather than never advance.
			n.run = unknownStep(st.Type)
			g.steps[st.ID] = n
			continue
		}
		traits := kind.Traits()
		if traits.Role == cardflow.RoleTrigger {
			g.trigger = st.ID
		}
		n.local = traits.Local
		var err error
		if n.run, err = kind.Compile(env, st.Config); err != nil {
			return nil, &StepError{Where: fmt.Sprintf("workflow_steps[%d] (%s)", i, st.ID), Err: err}
		}
		n.waiter, _ = n.run.(steps.Waiter)
		g.steps[st.ID] = n
	}
	for i, c := range conns {
		from := g.steps[c.From]
		if from == nil {
			return nil, &StepError{Where: fmt.Sprintf("workflow_connections[%d]", i), Err: fmt.Errorf("unknown step %q", c.From)}
		}
		switch {
		case c.On != "":
			from.exits[c.On] = c.To
		case c.When != "":
			p, err := env.Compile(c.When)
			if err != nil {
				return nil, &StepError{Where: fmt.Sprintf("workflow_connections[%d] (%s -> %s) when", i, c.From, c.To), Err: err}
			}
			from.branches = append(from.branches, steps.Branch{To: c.To, When: p})
		default:
			from.next = c.To
		}
	}
	if g.trigger == "" {
		return nil, errors.New("the workflow has no trigger step")
	}
	return g, nil
}
