package steps

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/expr"
)

// Delay sleeps for a duration, or until the time an expression gives.
var Delay = Define[delayConfig]("delay", cardflow.StepTraits{Local: true}, delaySchema)

type delayConfig struct {
	Duration string `json:"duration"`
	Until    string `json:"until"`

	duration time.Duration
}

func (c *delayConfig) Validate() error {
	if (c.Duration == "") == (c.Until == "") {
		return errors.New("a delay step needs exactly one of config.duration and config.until")
	}
	var err error
	c.duration, err = duration("duration", c.Duration)
	return err
}

func (c *delayConfig) Check(env *expr.Env) (Step, error) {
	s := &delayStep{duration: c.duration}
	if strings.TrimSpace(c.Until) != "" {
		var err error
		if s.until, err = env.Compile(c.Until); err != nil {
			return nil, fmt.Errorf("config.until: %w", err)
		}
	}
	return s, nil
}

type delayStep struct {
	duration time.Duration
	until    *expr.Program
}

func (s *delayStep) Run(ctx context.Context, r *Run) Outcome {
	wake := r.Now().Add(s.duration)
	if s.until != nil {
		v, err := s.until.Eval(ctx, r.Vars)
		if err != nil {
			return Outcome{Reason: "config.until: " + err.Error()}
		}
		if wake, err = timeOf(v); err != nil {
			return Outcome{Reason: "config.until: " + err.Error()}
		}
	}
	return Outcome{Sleep: &wake}
}

// timeOf reads a point in time: an RFC 3339 string or epoch milliseconds.
func timeOf(v any) (time.Time, error) {
	switch t := v.(type) {
	case string:
		if p, err := time.Parse(time.RFC3339Nano, t); err == nil {
			return p, nil
		}
		if ms, err := strconv.ParseInt(t, 10, 64); err == nil {
			return time.UnixMilli(ms), nil
		}
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time", t)
	case float64:
		return time.UnixMilli(int64(t)), nil
	case int64:
		return time.UnixMilli(t), nil
	}
	return time.Time{}, fmt.Errorf("got %T, want an RFC 3339 time or epoch milliseconds", v)
}

var delaySchema = object("Sleeps for a duration, or until a time; exactly one of duration and until.", nil, map[string]Schema{
	"duration": typed("string", "An ISO 8601 duration, such as PT1H."),
	"until":    typed("string", "An expression giving the time to wake, RFC 3339 or epoch milliseconds."),
})
