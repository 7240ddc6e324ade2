package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/awscron"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// graph is a workflow version compiled for running: every expression and
// template parsed once, every exit resolved.
type graph struct {
	trigger string
	steps   map[string]*node
}

type node struct {
	step cardflow.Step
	// next is the default exit, "" for end steps.
	next string
	// branches are the condition's `when` exits, in definition order.
	branches []branch
	// exits are the non-success exits by name (error, timeout).
	exits map[string]string

	// Compiled config, by step kind.
	output   *expr.Value // transform, end
	url      *expr.Template
	headers  *expr.Value
	body     *expr.Value
	query    *expr.Value
	data     *expr.Value
	until    *expr.Program
	timeout  time.Duration // http call timeout, or how long a card or wait waits
	duration time.Duration // delay
}

type branch struct {
	to   string
	when *expr.Program
}

// StepError is a definition error of one step or connection, found when the
// workflow is compiled.
type StepError struct {
	Where string
	Err   error
}

func (e *StepError) Error() string { return e.Where + ": " + e.Err.Error() }

// compile builds the graph of a definition. The definition has passed
// ValidateDefinition; compile adds the expressions.
func compile(env *expr.Env, steps []cardflow.Step, conns []cardflow.Connection) (*graph, error) {
	g := &graph{steps: make(map[string]*node, len(steps))}
	for i := range steps {
		st := steps[i]
		n := &node{step: st, exits: map[string]string{}}
		if st.Type == cardflow.StepTrigger {
			g.trigger = st.ID
		}
		if err := n.compileConfig(env); err != nil {
			return nil, &StepError{Where: fmt.Sprintf("workflow_steps[%d] (%s)", i, st.ID), Err: err}
		}
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
			from.branches = append(from.branches, branch{to: c.To, when: p})
		default:
			from.next = c.To
		}
	}
	if g.trigger == "" {
		return nil, errors.New("the workflow has no trigger step")
	}
	return g, nil
}

func (n *node) compileConfig(env *expr.Env) error {
	cfg := n.step.Config
	value := func(key string) (*expr.Value, error) {
		v, ok := cfg[key]
		if !ok {
			return nil, nil
		}
		c, err := env.CompileValue(v)
		if err != nil {
			return nil, fmt.Errorf("config.%s: %w", key, err)
		}
		return c, nil
	}
	dur := func(key string) (time.Duration, error) {
		s, _ := cfg[key].(string)
		if s == "" {
			return 0, nil
		}
		return cardflow.ParseDuration(s)
	}
	var err error
	switch n.step.Type {
	case cardflow.StepTrigger:
		if cfg["kind"] == cardflow.TriggerSchedule {
			e, _ := cfg["expression"].(string)
			tz, _ := cfg["timezone"].(string)
			if _, err := awscron.Parse(e, tz); err != nil {
				return fmt.Errorf("config.expression: %w", err)
			}
		}
	case cardflow.StepTransform, cardflow.StepEnd:
		n.output, err = value("output")
	case cardflow.StepHTTP, cardflow.StepERP:
		s, _ := cfg[n.urlKey()].(string)
		if n.url, err = env.CompileTemplate(s); err != nil {
			return fmt.Errorf("config.%s: %w", n.urlKey(), err)
		}
		if err := checkCallConfig(n.step); err != nil {
			return err
		}
		if n.headers, err = value("headers"); err != nil {
			return err
		}
		if n.query, err = value("query"); err != nil {
			return err
		}
		if n.body, err = value("body"); err != nil {
			return err
		}
		n.timeout, err = dur("timeout")
	case cardflow.StepCard:
		if n.data, err = value("data"); err != nil {
			return err
		}
		n.timeout, err = dur("timeout")
	case cardflow.StepWait:
		n.timeout, err = dur("timeout")
	case cardflow.StepDelay:
		if u, _ := cfg["until"].(string); strings.TrimSpace(u) != "" {
			if n.until, err = env.Compile(u); err != nil {
				return fmt.Errorf("config.until: %w", err)
			}
		}
		n.duration, err = dur("duration")
	}
	return err
}

// urlKey is the config key of an http or erp step's address template.
func (n *node) urlKey() string {
	if n.step.Type == cardflow.StepERP {
		return "entity"
	}
	return "url"
}
