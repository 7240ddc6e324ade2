package cardflow

import "encoding/json"

// TriggerConfig is the config of a trigger step. The trigger kind of
// pkg/steps decodes into it and validates it; publishing reads a
// version's schedule from it without linking the step kinds.
type TriggerConfig struct {
	Kind       *string `json:"kind"`
	Expression *string `json:"expression"`
	Timezone   string  `json:"timezone"`
}

// ScheduleSpec is the schedule a trigger starts its workflow on.
type ScheduleSpec struct {
	Expression string
	Timezone   string
}

// Schedule is the schedule of a SCHEDULE trigger, nil for a REQUEST one.
func (c *TriggerConfig) Schedule() *ScheduleSpec {
	if c.Kind == nil || *c.Kind != TriggerSchedule {
		return nil
	}
	s := &ScheduleSpec{Timezone: c.Timezone}
	if c.Expression != nil {
		s.Expression = *c.Expression
	}
	return s
}

// Schedule returns the schedule the version's trigger asks for, nil when
// requests trigger it. The version is read as it was saved, not validated
// again.
func (w *Workflow) Schedule() (*ScheduleSpec, error) {
	for i, st := range w.WorkflowSteps {
		if st.Type != StepTrigger {
			continue
		}
		b, err := json.Marshal(st.Config)
		if err != nil {
			return nil, Errorf(EINVALID, "workflow_steps[%d] (id %q): config is not JSON: %v", i, st.ID, err)
		}
		var c TriggerConfig
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, Errorf(EINVALID, "workflow_steps[%d] (id %q): config: %v", i, st.ID, err)
		}
		return c.Schedule(), nil
	}
	return nil, nil
}
