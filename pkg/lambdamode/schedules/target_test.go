package schedules_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/cardflow/cardflow/internal/fakes/ebschedulertest"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/ebscheduler"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/schedules"
	"github.com/cardflow/cardflow/pkg/localrunner"
)

const group = "cardflow-test"

// deployment is the service as the schedule target function has it, with
// schedules in the stand-in for EventBridge Scheduler.
type deployment struct {
	srv   *ebschedulertest.Server
	store *boltstore.Store
	svc   *app.Service
	admin context.Context
}

func newDeployment(t *testing.T, opts ...app.Option) *deployment {
	t.Helper()
	srv := ebschedulertest.New()
	srv.AddGroup(group)
	t.Cleanup(srv.Close)
	env := lambdamode.Env{
		Region: "us-east-1", AccessKeyID: "test", SecretAccessKey: "test", ScheduleGroup: group,
		ScheduleTargetARN: "arn:aws:lambda:us-east-1:123456789012:function:cardflow-schedule-target",
		SchedulerRoleARN:  "arn:aws:iam::123456789012:role/cardflow-scheduler",
	}
	sched, err := schedules.NewScheduler(env, slog.New(slog.DiscardHandler), func(o *scheduler.Options) { o.BaseEndpoint = aws.String(srv.URL) })
	if err != nil {
		t.Fatal(err)
	}
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	exprEnv, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(store, store, exprEnv)
	if err != nil {
		t.Fatal(err)
	}
	runner, err := localrunner.New(eng, store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close() })
	svc, err := app.New(store, app.Deps{Checker: eng, CardChecker: cards.Checker{}, Runner: runner, Scheduler: sched}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	p := &cardflow.Principal{OrganizationID: "acme", WorkspaceID: "finance", Scopes: cardflow.AllScopes, Actor: "ops"}
	return &deployment{srv: srv, store: store, svc: svc, admin: cardflow.NewContextWithPrincipal(context.Background(), p)}
}

// publish saves and publishes a version of a scheduled workflow (a new
// workflow when id is "").
func (d *deployment) publish(t *testing.T, id, expression string) *cardflow.Workflow {
	t.Helper()
	w, err := d.svc.SaveWorkflow(d.admin, app.SaveWorkflowInput{
		WorkflowID: id, WorkflowName: "Nightly digest",
		WorkflowSteps: []cardflow.Step{
			{ID: "start", Name: "Every night", Type: cardflow.StepTrigger, Config: map[string]any{"kind": "SCHEDULE", "expression": expression, "timezone": "Europe/Berlin"}},
			{ID: "done", Name: "Done", Type: "end", Config: map[string]any{"status": "SUCCEEDED"}},
		},
		WorkflowConnections: []cardflow.Connection{{From: "start", To: "done"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if w, err = d.svc.PublishWorkflow(d.admin, w.WorkflowID, w.WorkflowVersion); err != nil {
		t.Fatal(err)
	}
	return w
}

// deliver is what the schedule's target receives for the run at at.
func (d *deployment) deliver(t *testing.T, w *cardflow.Workflow, at time.Time) ebscheduler.TargetInput {
	t.Helper()
	raw, err := d.srv.Deliver(group, ebscheduler.Name(w.OrganizationID, w.WorkflowID), at, 1)
	if err != nil {
		t.Fatal(err)
	}
	var in ebscheduler.TargetInput
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		t.Fatalf("decode the delivered input %s: %v", raw, err)
	}
	return in
}

func (d *deployment) executions(t *testing.T, workflowID string) []*cardflow.Execution {
	t.Helper()
	page, err := d.store.ListWorkflowExecutions(t.Context(), "acme", workflowID, cardflow.ListOptions[cardflow.ExecutionKey]{Limit: 30})
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

func newTarget(t *testing.T, svc *app.Service) *schedules.Target {
	t.Helper()
	target, err := schedules.NewTarget(svc.Runs, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return target
}

func TestTargetStartsEachRunOnce(t *testing.T) {
	d := newDeployment(t)
	w := d.publish(t, "", "rate(1 hour)")
	target := newTarget(t, d.svc)
	at := time.Now().Add(time.Hour).Truncate(time.Second)
	in := d.deliver(t, w, at)
	if in.OrganizationID != "acme" || in.WorkspaceID != "finance" || in.WorkflowID != w.WorkflowID || in.WorkflowVersion != 1 || in.ScheduledTime != at.UTC().Format(time.RFC3339) {
		t.Fatalf("delivered input: got %+v", in)
	}

	first, err := target.Handle(t.Context(), in)
	if err != nil || !first.Started {
		t.Fatalf("first delivery: got %+v, %v, want started", first, err)
	}
	second, err := target.Handle(t.Context(), in)
	if err != nil || second != first {
		t.Errorf("second delivery: got %+v, %v, want %+v", second, err, first)
	}
	if want := app.ScheduledExecutionID("acme", w.WorkflowID, at); first.ExecutionID != want {
		t.Errorf("execution id: got %s, want %s", first.ExecutionID, want)
	}
	// The id is a ULID whose time is the scheduled time.
	if !strings.HasPrefix(first.ExecutionID, cardflow.NewID(at)[:10]) {
		t.Errorf("execution id %s: want the time part of %s", first.ExecutionID, at)
	}
	// A day later the idempotency record is gone; the id still holds.
	later := rebind(t, d, app.WithClock(func() time.Time { return time.Now().Add(25 * time.Hour) }))
	third, err := newTarget(t, later).Handle(t.Context(), in)
	if err != nil || third != first {
		t.Errorf("delivery a day later: got %+v, %v, want %+v", third, err, first)
	}

	exs := d.executions(t, w.WorkflowID)
	if len(exs) != 1 {
		t.Fatalf("executions: got %d, want 1", len(exs))
	}
	if ex := exs[0]; ex.WorkflowTriggerType != cardflow.TriggerSchedule || ex.WorkflowExecutionID != first.ExecutionID || ex.TriggeredBy != "schedule:"+w.WorkflowID {
		t.Errorf("execution: got %s triggered by %s (%s), want %s by SCHEDULE (schedule:%s)", ex.WorkflowExecutionID, ex.WorkflowTriggerType, ex.TriggeredBy, first.ExecutionID, w.WorkflowID)
	}

	// Another run is another execution.
	next, err := target.Handle(t.Context(), d.deliver(t, w, at.Add(time.Hour)))
	if err != nil || !next.Started || next.ExecutionID == first.ExecutionID {
		t.Errorf("next run: got %+v, %v, want a new execution", next, err)
	}
}

// rebind returns another service over d's store, with its own runner and
// options, as another Lambda instance would be.
func rebind(t *testing.T, d *deployment, opts ...app.Option) *app.Service {
	t.Helper()
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(d.store, d.store, env)
	if err != nil {
		t.Fatal(err)
	}
	runner, err := localrunner.New(eng, d.store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close() })
	svc, err := app.New(d.store, app.Deps{Runner: runner}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestTargetSkipsPausedAndReplacedSchedules(t *testing.T) {
	d := newDeployment(t)
	w := d.publish(t, "", "rate(1 hour)")
	target := newTarget(t, d.svc)
	at := time.Now().Add(time.Hour).Truncate(time.Second)
	v1 := d.deliver(t, w, at)

	if _, err := d.svc.Toggle(d.admin, app.ToggleInput{WorkflowID: w.WorkflowID, WorkflowVersion: 1, Action: "PAUSE"}); err != nil {
		t.Fatal(err)
	}
	if sc, _ := d.srv.Schedule(group, ebscheduler.Name("acme", w.WorkflowID)); sc.State != "DISABLED" {
		t.Errorf("schedule after PAUSE: got %s, want DISABLED", sc.State)
	}
	out, err := target.Handle(t.Context(), v1)
	if err != nil || out.Started || !strings.Contains(out.Reason, "PAUSED") {
		t.Errorf("late delivery of a paused schedule: got %+v, %v, want nothing started because it is PAUSED", out, err)
	}

	if _, err := d.svc.Toggle(d.admin, app.ToggleInput{WorkflowID: w.WorkflowID, WorkflowVersion: 1, Action: "PLAY"}); err != nil {
		t.Fatal(err)
	}
	if sc, _ := d.srv.Schedule(group, ebscheduler.Name("acme", w.WorkflowID)); sc.State != "ENABLED" {
		t.Errorf("schedule after PLAY: got %s, want ENABLED", sc.State)
	}
	missed := v1
	missed.ScheduledTime = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	if out, err := target.Handle(t.Context(), missed); err != nil || out.Started || !strings.Contains(out.Reason, "before") {
		t.Errorf("delivery of a run due before PLAY: got %+v, %v, want nothing started", out, err)
	}

	d.publish(t, w.WorkflowID, "cron(0 2 * * ? *)")
	got := d.deliver(t, w, at)
	if got.WorkflowVersion != 2 {
		t.Errorf("schedule after publishing version 2: runs version %d, want 2", got.WorkflowVersion)
	}
	out, err = target.Handle(t.Context(), v1)
	if err != nil || out.Started || !strings.Contains(out.Reason, "no longer exists") {
		t.Errorf("late delivery for the replaced version 1: got %+v, %v, want nothing started", out, err)
	}
	if n := len(d.executions(t, w.WorkflowID)); n != 0 {
		t.Errorf("executions: got %d, want 0", n)
	}
	if out, err := target.Handle(t.Context(), got); err != nil || !out.Started {
		t.Errorf("delivery for version 2: got %+v, %v, want started", out, err)
	}
}

func TestTargetRefusesBadInput(t *testing.T) {
	d := newDeployment(t)
	target := newTarget(t, d.svc)
	good := ebscheduler.TargetInput{OrganizationID: "acme", WorkflowID: "01KAB3XQ0000000000000000ZZ", WorkflowVersion: 1, ScheduledTime: "2026-03-30T06:00:00Z"}
	for _, tc := range []struct {
		what   string
		change func(*ebscheduler.TargetInput)
	}{
		{"an unsubstituted time", func(in *ebscheduler.TargetInput) { in.ScheduledTime = ebscheduler.ScheduledTimePlaceholder }},
		{"no organization", func(in *ebscheduler.TargetInput) { in.OrganizationID = "" }},
		{"no version", func(in *ebscheduler.TargetInput) { in.WorkflowVersion = 0 }},
		{"a time before 1970", func(in *ebscheduler.TargetInput) { in.ScheduledTime = "1969-12-31T00:00:00Z" }},
	} {
		in := good
		tc.change(&in)
		if _, err := target.Handle(t.Context(), in); cardflow.ErrorCode(err) != cardflow.EINVALID {
			t.Errorf("input with %s: got %v, want VALIDATION_ERROR", tc.what, err)
		}
	}
	out, err := target.Handle(t.Context(), good)
	if err != nil || out.Started {
		t.Errorf("input of an unknown schedule: got %+v, %v, want nothing started", out, err)
	}
}
