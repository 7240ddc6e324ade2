package cardflow_test

import (
	"reflect"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func TestWorkflowSchedule(t *testing.T) {
	trigger := func(config map[string]any) *cardflow.Workflow {
		return &cardflow.Workflow{WorkflowSteps: []cardflow.Step{
			{ID: "start", Name: "start", Type: cardflow.StepTrigger, Config: config},
			{ID: "done", Name: "done", Type: "end", Config: map[string]any{}},
		}}
	}
	for _, tt := range []struct {
		name    string
		w       *cardflow.Workflow
		want    *cardflow.ScheduleSpec
		wantErr bool
	}{
		{"request", trigger(map[string]any{"kind": "REQUEST"}), nil, false},
		{"schedule", trigger(map[string]any{"kind": "SCHEDULE", "expression": "rate(1 hour)", "timezone": "Europe/Berlin"}),
			&cardflow.ScheduleSpec{Expression: "rate(1 hour)", Timezone: "Europe/Berlin"}, false},
		{"schedule in UTC", trigger(map[string]any{"kind": "SCHEDULE", "expression": "cron(0 8 * * ? *)"}),
			&cardflow.ScheduleSpec{Expression: "cron(0 8 * * ? *)"}, false},
		{"stored with a key since refused", trigger(map[string]any{"kind": "SCHEDULE", "expression": "rate(1 day)", "cron": "x"}),
			&cardflow.ScheduleSpec{Expression: "rate(1 day)"}, false},
		{"no trigger", &cardflow.Workflow{}, nil, false},
		{"kind of the wrong type", trigger(map[string]any{"kind": 1}), nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.w.Schedule()
			if (err != nil) != tt.wantErr {
				t.Fatalf("got error %v, want an error: %v", err, tt.wantErr)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
