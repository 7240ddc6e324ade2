package httpapi_test

import (
	"testing"
)

func TestGetWorkflowSchedule(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ids := loadSample(t, e, "org-a")
	reader := e.key("org-a", "read")
	runner := e.key("org-a", "read", "execute")
	other := e.key("org-b", "read")
	pause := func() {
		t.Helper()
		r := e.do("POST", "/v1/workflows/toggleScheduledWorkflow", runner, map[string]any{"workflow_id": ids.ScheduleWorkflowID, "workflow_version": 1, "action": "PAUSE"})
		if r.status != 200 {
			t.Fatalf("pause: got %d %v", r.status, r.body)
		}
	}
	for _, c := range []struct {
		name     string
		before   func()
		key      string
		workflow string
		status   int
		state    string
		runs     int
	}{
		{"an active schedule with its next runs", nil, reader, ids.ScheduleWorkflowID, 200, "ACTIVE", 3},
		{"a paused one has none", pause, reader, ids.ScheduleWorkflowID, 200, "PAUSED", 0},
		{"a workflow triggered by requests", nil, reader, ids.ApprovalWorkflowID, 404, "", 0},
		{"another organization's", nil, other, ids.ScheduleWorkflowID, 404, "", 0},
		{"no workflow id", nil, reader, "", 400, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.before != nil {
				c.before()
			}
			var q []string
			if c.workflow != "" {
				q = []string{"workflow_id", c.workflow}
			}
			r := e.get("/v1/workflows/getWorkflowSchedule", c.key, q...)
			if r.status != c.status {
				t.Fatalf("got %d %v, want %d", r.status, r.body, c.status)
			}
			if c.status != 200 {
				return
			}
			item := r.body["item"].(map[string]any)
			if item["status"] != c.state || len(item["next_runs"].([]any)) != c.runs {
				t.Errorf("got %v with next runs %v, want %s with %d", item["status"], item["next_runs"], c.state, c.runs)
			}
		})
	}
}
