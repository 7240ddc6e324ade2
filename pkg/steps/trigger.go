package steps

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/cardflow/cardflow/pkg/awscron"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// Trigger is the entry point of a workflow, run by a request or a
// schedule; its output is the execution's input.
var Trigger = Define[triggerConfig](cardflow.StepTrigger, cardflow.StepTraits{Role: cardflow.RoleTrigger, Local: true}, triggerSchema)

// triggerConfig is the domain's trigger config, which publishing reads
// the schedule from.
type triggerConfig struct {
	cardflow.TriggerConfig
}

var scheduleExpression = regexp.MustCompile(`^(cron|rate|at)\(.+\)$`)

func (c *triggerConfig) Validate() error {
	if err := required(cardflow.StepTrigger, "kind", c.Kind); err != nil {
		return err
	}
	switch *c.Kind {
	case cardflow.TriggerRequest:
	case cardflow.TriggerSchedule:
		if err := required(cardflow.StepTrigger, "expression", c.Expression); err != nil {
			return err
		}
		if !scheduleExpression.MatchString(*c.Expression) {
			return fmt.Errorf("config.expression %q must be cron(...), rate(...) or at(...)", *c.Expression)
		}
		if c.Timezone != "" {
			if _, err := time.LoadLocation(c.Timezone); err != nil {
				return fmt.Errorf("config.timezone %q is not an IANA time zone", c.Timezone)
			}
		}
	default:
		return fmt.Errorf("config.kind must be REQUEST or SCHEDULE, not %q", *c.Kind)
	}
	return nil
}

// Check parses a schedule the way EventBridge Scheduler will.
func (c *triggerConfig) Check(*expr.Env) (Step, error) {
	if *c.Kind == cardflow.TriggerSchedule {
		if _, err := awscron.Parse(*c.Expression, c.Timezone); err != nil {
			return nil, fmt.Errorf("config.expression: %w", err)
		}
	}
	return triggerStep{}, nil
}

type triggerStep struct{}

func (triggerStep) Run(_ context.Context, r *Run) Outcome {
	in := r.Execution.WorkflowInputPayload
	return Outcome{Input: in, Output: in}
}

var triggerSchema = object("Where an execution starts: a request (triggerWorkflow) or a schedule.", []string{"kind"}, map[string]Schema{
	"kind":       enum("REQUEST: started by triggerWorkflow; SCHEDULE: started on config.expression once the version is published.", cardflow.TriggerRequest, cardflow.TriggerSchedule),
	"expression": typed("string", "For SCHEDULE: an EventBridge Scheduler expression, cron(...), rate(...) or at(...)."),
	"timezone":   typed("string", "For SCHEDULE: the IANA time zone the expression is read in (default UTC)."),
})
