package steps

import (
	"context"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// Wait waits for a resume (from SAP, say) on the execution's process id;
// the resume's body is its output. Without a resume before its timeout it
// leaves by the timeout exit.
var Wait = Define[waitConfig]("wait", cardflow.StepTraits{Exits: []string{cardflow.ExitTimeout}, Local: true}, waitSchema)

type waitConfig struct {
	Timeout string `json:"timeout"`

	timeout time.Duration
}

func (c *waitConfig) Validate() error {
	var err error
	c.timeout, err = duration("timeout", c.Timeout)
	return err
}

func (c *waitConfig) Check(*expr.Env) (Step, error) {
	return &waitStep{timeout: c.timeout, text: c.Timeout}, nil
}

// waitStep is the waiting of wait and card steps.
type waitStep struct {
	timeout time.Duration
	text    string // the timeout as the config says it
}

func (s *waitStep) Run(context.Context, *Run) Outcome { return Outcome{} }

func (s *waitStep) Timeout() time.Duration { return s.timeout }

func (s *waitStep) Open(context.Context, *Run) error { return nil }

func (s *waitStep) TimedOut() string { return "timed out after " + s.text }

var waitSchema = object("Waits for a resume on the execution's process id; the resume's body is its output.", nil, map[string]Schema{
	"timeout": typed("string", "An ISO 8601 duration; without a resume by then the step leaves by the timeout exit."),
})
