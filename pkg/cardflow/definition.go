package cardflow

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Step types.
const (
	StepTrigger   = "trigger"
	StepHTTP      = "http"
	StepERP       = "erp"
	StepTransform = "transform"
	StepCondition = "condition"
	StepCard      = "card"
	StepWait      = "wait"
	StepDelay     = "delay"
	StepEnd       = "end"
)

// Non-success exits a connection may name in On.
const (
	ExitError   = "error"
	ExitTimeout = "timeout"
)

// exitsByType lists the non-success exits each step type can take.
var exitsByType = map[string][]string{
	StepTrigger:   nil,
	StepHTTP:      {ExitError},
	StepERP:       {ExitError},
	StepTransform: nil,
	StepCondition: nil,
	StepCard:      {ExitError, ExitTimeout},
	StepWait:      {ExitTimeout},
	StepDelay:     nil,
	StepEnd:       nil,
}

// Definition limits, so one version stays far below a record's size limit.
const (
	MaxSteps       = 200
	MaxConnections = 400
	MaxNameLength  = 200
)

var stepIDPattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`)

// ValidateDefinition checks the name, steps and connections of a workflow
// version, and names the step or connection at fault. It does not look at
// expressions; those are checked by the engine's compiler.
func (w *Workflow) ValidateDefinition() error {
	name := strings.TrimSpace(w.WorkflowName)
	if name == "" {
		return Errorf(EINVALID, "workflow_name is required")
	}
	if len(name) > MaxNameLength {
		return Errorf(EINVALID, "workflow_name is longer than %d characters", MaxNameLength)
	}
	if len(w.WorkflowSteps) == 0 {
		return Errorf(EINVALID, "workflow_steps must hold at least a trigger and an end step")
	}
	if len(w.WorkflowSteps) > MaxSteps {
		return Errorf(EINVALID, "workflow_steps holds %d steps; the limit is %d", len(w.WorkflowSteps), MaxSteps)
	}
	if len(w.WorkflowConnections) > MaxConnections {
		return Errorf(EINVALID, "workflow_connections holds %d connections; the limit is %d", len(w.WorkflowConnections), MaxConnections)
	}

	steps := make(map[string]*Step, len(w.WorkflowSteps))
	var trigger *Step
	for i := range w.WorkflowSteps {
		s := &w.WorkflowSteps[i]
		where := fmt.Sprintf("workflow_steps[%d]", i)
		if !stepIDPattern.MatchString(s.ID) {
			return Errorf(EINVALID, "%s: id %q must start with a letter and hold at most 64 letters, digits, '_' or '-'", where, s.ID)
		}
		where = fmt.Sprintf("workflow_steps[%d] (id %q)", i, s.ID)
		if steps[s.ID] != nil {
			return Errorf(EINVALID, "%s: step id is used twice", where)
		}
		steps[s.ID] = s
		if strings.TrimSpace(s.Name) == "" {
			return Errorf(EINVALID, "%s: name is required", where)
		}
		if len(s.Name) > MaxNameLength {
			return Errorf(EINVALID, "%s: name is longer than %d characters", where, MaxNameLength)
		}
		if _, ok := exitsByType[s.Type]; !ok {
			return Errorf(EINVALID, "%s: unknown type %q; use trigger, http, erp, transform, condition, card, wait, delay or end", where, s.Type)
		}
		if s.Type == StepTrigger {
			if trigger != nil {
				return Errorf(EINVALID, "%s: a workflow has exactly one trigger step, and %q is one already", where, trigger.ID)
			}
			trigger = s
		}
		if err := validateStepConfig(s); err != nil {
			return Errorf(EINVALID, "%s: %s", where, err.Error())
		}
	}
	if trigger == nil {
		return Errorf(EINVALID, "workflow_steps has no trigger step; a workflow has exactly one")
	}
	if err := w.validateTeams(); err != nil {
		return err
	}
	out := make(map[string][]Connection, len(steps))
	for i, c := range w.WorkflowConnections {
		where := fmt.Sprintf("workflow_connections[%d] (%s -> %s)", i, c.From, c.To)
		from, to := steps[c.From], steps[c.To]
		switch {
		case from == nil:
			return Errorf(EINVALID, "%s: from names no step", where)
		case to == nil:
			return Errorf(EINVALID, "%s: to names no step", where)
		case to.Type == StepTrigger:
			return Errorf(EINVALID, "%s: nothing may lead into the trigger step", where)
		case from.Type == StepEnd:
			return Errorf(EINVALID, "%s: an end step has no outgoing connections", where)
		case c.When != "" && c.On != "":
			return Errorf(EINVALID, "%s: a connection has either when or on, not both", where)
		case c.When != "" && from.Type != StepCondition:
			return Errorf(EINVALID, "%s: only condition steps have when expressions", where)
		}
		if c.On != "" && !contains(exitsByType[from.Type], c.On) {
			return Errorf(EINVALID, "%s: a %s step has no %q exit", where, from.Type, c.On)
		}
		for _, prev := range out[c.From] {
			if prev.On == c.On && prev.When == c.When {
				return Errorf(EINVALID, "%s: duplicates an earlier connection of step %q", where, c.From)
			}
		}
		out[c.From] = append(out[c.From], c)
	}

	for i := range w.WorkflowSteps {
		s := &w.WorkflowSteps[i]
		if s.Type == StepEnd {
			continue
		}
		defaults := 0
		for _, c := range out[s.ID] {
			if c.When == "" && c.On == "" {
				defaults++
			}
		}
		if defaults != 1 {
			kind := "one connection without when or on (where it goes next)"
			if s.Type == StepCondition {
				kind = "one default connection without when (taken when no expression matches)"
			}
			return Errorf(EINVALID, "workflow_steps[%d] (id %q): needs exactly %s, has %d", i, s.ID, kind, defaults)
		}
	}

	// Every step must be reachable from the trigger, and some end too.
	seen := map[string]bool{trigger.ID: true}
	queue := []string{trigger.ID}
	endReached := false
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if steps[id].Type == StepEnd {
			endReached = true
		}
		for _, c := range out[id] {
			if !seen[c.To] {
				seen[c.To] = true
				queue = append(queue, c.To)
			}
		}
	}
	for i, s := range w.WorkflowSteps {
		if !seen[s.ID] {
			return Errorf(EINVALID, "workflow_steps[%d] (id %q): not reachable from the trigger step %q", i, s.ID, trigger.ID)
		}
	}
	if !endReached {
		return Errorf(EINVALID, "no end step is reachable from the trigger step %q", trigger.ID)
	}
	return nil
}

// validateStepConfig checks the parts of a step's config that have a fixed
// shape. Expressions and templates inside it are checked elsewhere.
func validateStepConfig(s *Step) error {
	cfg := s.Config
	str := func(key string, required bool) (string, error) {
		v, ok := cfg[key]
		if !ok || v == nil {
			if required {
				return "", fmt.Errorf("config.%s is required for a %s step", key, s.Type)
			}
			return "", nil
		}
		sv, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("config.%s must be a string", key)
		}
		if required && strings.TrimSpace(sv) == "" {
			return "", fmt.Errorf("config.%s must not be empty", key)
		}
		return sv, nil
	}
	duration := func(key string, required bool) error {
		v, err := str(key, required)
		if err != nil || v == "" {
			return err
		}
		if _, err := ParseDuration(v); err != nil {
			return fmt.Errorf("config.%s: %v", key, err)
		}
		return nil
	}

	switch s.Type {
	case StepTrigger:
		kind, err := str("kind", true)
		if err != nil {
			return err
		}
		switch kind {
		case TriggerRequest:
		case TriggerSchedule:
			expr, err := str("expression", true)
			if err != nil {
				return err
			}
			if !scheduleExpression.MatchString(expr) {
				return fmt.Errorf("config.expression %q must be cron(...), rate(...) or at(...)", expr)
			}
			tz, err := str("timezone", false)
			if err != nil {
				return err
			}
			if tz != "" {
				if _, err := time.LoadLocation(tz); err != nil {
					return fmt.Errorf("config.timezone %q is not an IANA time zone", tz)
				}
			}
		default:
			return fmt.Errorf("config.kind must be REQUEST or SCHEDULE, not %q", kind)
		}
	case StepHTTP:
		method, err := str("method", true)
		if err != nil {
			return err
		}
		if !contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}, strings.ToUpper(method)) {
			return fmt.Errorf("config.method %q is not one of GET, POST, PUT, PATCH, DELETE, HEAD", method)
		}
		if _, err := str("url", true); err != nil {
			return err
		}
		if h, ok := cfg["headers"]; ok && h != nil {
			if _, ok := h.(map[string]any); !ok {
				return fmt.Errorf("config.headers must be an object")
			}
		}
		return duration("timeout", false)
	case StepERP:
		// The SAP profile in workflow_integrations.erp is checked with the
		// expressions, by the engine.
		method, err := str("method", false)
		if err != nil {
			return err
		}
		if method != "" && !contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, strings.ToUpper(method)) {
			return fmt.Errorf("config.method %q is not one of GET, POST, PUT, PATCH, DELETE", method)
		}
		service, err := str("service", true)
		if err != nil {
			return err
		}
		if !strings.HasPrefix(service, "/") || strings.ContainsAny(service, "?#{} ") {
			return fmt.Errorf("config.service %q must be the OData service path, such as /sap/opu/odata/sap/API_PURCHASEORDER_PROCESS_SRV", service)
		}
		if _, err := str("entity", true); err != nil {
			return err
		}
		if h, ok := cfg["headers"]; ok && h != nil {
			if _, ok := h.(map[string]any); !ok {
				return fmt.Errorf("config.headers must be an object")
			}
		}
		return duration("timeout", false)
	case StepTransform:
		if _, ok := cfg["output"]; !ok {
			return fmt.Errorf("config.output is required for a transform step")
		}
	case StepCard:
		if _, err := str("card_id", true); err != nil {
			return err
		}
		if v, ok := cfg["card_version"]; ok && v != nil {
			if f, ok := v.(float64); !ok || f < 1 || f != float64(int(f)) {
				return fmt.Errorf("config.card_version must be a positive whole number")
			}
		}
		if d, ok := cfg["data"]; ok && d != nil {
			if _, ok := d.(map[string]any); !ok {
				return fmt.Errorf("config.data must be an object")
			}
		}
		return duration("timeout", false)
	case StepWait:
		return duration("timeout", false)
	case StepDelay:
		d, err := str("duration", false)
		if err != nil {
			return err
		}
		u, err := str("until", false)
		if err != nil {
			return err
		}
		if (d == "") == (u == "") {
			return fmt.Errorf("a delay step needs exactly one of config.duration and config.until")
		}
		return duration("duration", false)
	case StepEnd:
		status, err := str("status", false)
		if err != nil {
			return err
		}
		if status != "" && status != ExecSucceeded && status != ExecFailed {
			return fmt.Errorf("config.status must be SUCCEEDED or FAILED, not %q", status)
		}
	}
	return nil
}

var scheduleExpression = regexp.MustCompile(`^(cron|rate|at)\(.+\)$`)

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
