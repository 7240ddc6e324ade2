package ebscheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/cardflow/cardflow/internal/fakes/ebschedulertest"
	"github.com/cardflow/cardflow/internal/mototest"
	"github.com/cardflow/cardflow/internal/schedulertest"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/ebscheduler"
)

const (
	group     = "cardflow-test"
	targetARN = "arn:aws:lambda:us-east-1:123456789012:function:cardflow-schedule-target"
	roleARN   = "arn:aws:iam::123456789012:role/cardflow-scheduler"
	queueARN  = "arn:aws:sqs:us-east-1:123456789012:cardflow-schedule-dlq"
)

var config = ebscheduler.Config{GroupName: group, TargetARN: targetARN, RoleARN: roleARN, DeadLetterARN: queueARN}

// newServer starts the stand-in with the test's schedule group.
func newServer(t *testing.T) *ebschedulertest.Server {
	t.Helper()
	srv := ebschedulertest.New()
	srv.AddGroup(group)
	t.Cleanup(srv.Close)
	return srv
}

// newClient returns the SDK's client, pointed at url.
func newClient(url string, opts ...func(*scheduler.Options)) *scheduler.Client {
	return scheduler.New(scheduler.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	}, opts...)
}

// noRetries makes the client give up at the first error, so an injected
// error reaches the adapter.
func noRetries(o *scheduler.Options) { o.Retryer = aws.NopRetryer{} }

func newScheduler(t *testing.T, api ebscheduler.API, opts ...ebscheduler.Option) *ebscheduler.Scheduler {
	t.Helper()
	s, err := ebscheduler.New(api, config, append([]ebscheduler.Option{ebscheduler.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// atMoto returns a client of moto's EventBridge Scheduler and a schedule
// group of the test's own there, and the adapter's config naming it.
func atMoto(t *testing.T) (*scheduler.Client, ebscheduler.Config) {
	t.Helper()
	api := scheduler.New(scheduler.Options{
		Region: mototest.Region, BaseEndpoint: aws.String(mototest.Endpoint(t)), Credentials: mototest.Credentials(),
	})
	cfg := config
	cfg.GroupName = mototest.Name("cardflow-test")
	if _, err := api.CreateScheduleGroup(t.Context(), &scheduler.CreateScheduleGroupInput{Name: aws.String(cfg.GroupName)}); err != nil {
		t.Fatalf("CreateScheduleGroup at moto: %v", err)
	}
	return api, cfg
}

// TestContract runs the contract suite against moto's EventBridge
// Scheduler, looking at the schedules through GetSchedule.
func TestContract(t *testing.T) {
	schedulertest.Run(t, func(t *testing.T) schedulertest.Harness {
		api, cfg := atMoto(t)
		s, err := ebscheduler.New(api, cfg, ebscheduler.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		return schedulertest.Harness{Scheduler: s, Inspect: func(t *testing.T, sc *cardflow.Schedule) schedulertest.State {
			out, err := api.GetSchedule(t.Context(), &scheduler.GetScheduleInput{
				Name: aws.String(ebscheduler.Name(sc.OrganizationID, sc.WorkflowID)), GroupName: aws.String(cfg.GroupName),
			})
			var missing *types.ResourceNotFoundException
			if errors.As(err, &missing) {
				return schedulertest.State{}
			}
			if err != nil {
				t.Fatalf("GetSchedule: %v", err)
			}
			var in ebscheduler.TargetInput
			if err := json.Unmarshal([]byte(aws.ToString(out.Target.Input)), &in); err != nil {
				t.Fatalf("schedule input: %v", err)
			}
			if in.WorkflowVersion != sc.WorkflowVersion {
				return schedulertest.State{} // the workflow's schedule runs another version
			}
			return schedulertest.State{
				Exists: true, Enabled: out.State == types.ScheduleStateEnabled,
				Expression: aws.ToString(out.ScheduleExpression), Timezone: aws.ToString(out.ScheduleExpressionTimezone),
			}
		}}
	})
}

func TestName(t *testing.T) {
	const wf = "01KAB3XQ0000000000000000ZZ"
	valid := regexp.MustCompile(`^[0-9a-zA-Z_.-]{1,64}$`)
	long := strings.Repeat("o", 37)
	for _, tc := range []struct {
		org, want string
	}{
		{"acme", "acme_" + wf},
		{"demo-org", "demo-org_" + wf},
		{long, long + "_" + wf},
		{long + "x", strings.Repeat("o", 28) + "-"},
		{long + "y", strings.Repeat("o", 28) + "-"},
	} {
		got := ebscheduler.Name(tc.org, wf)
		if !valid.MatchString(got) {
			t.Errorf("Name(%q): got %q, which breaks Scheduler's name rules", tc.org, got)
		}
		if !strings.HasPrefix(got, tc.want) || !strings.HasSuffix(got, "_"+wf) {
			t.Errorf("Name(%q): got %q, want it to start with %q and end with the workflow id", tc.org, got, tc.want)
		}
	}
	if a, b := ebscheduler.Name(long+"x", wf), ebscheduler.Name(long+"y", wf); a == b {
		t.Errorf("organizations that differ after the cut share the name %q", a)
	}
}

func TestInput(t *testing.T) {
	sc := &cardflow.Schedule{OrganizationID: "acme", WorkspaceID: "finance", WorkflowID: "01KAB3XQ0000000000000000ZZ", WorkflowVersion: 3}
	got, err := ebscheduler.Input(sc)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"organization_id":"acme","workspace_id":"finance","workflow_id":"01KAB3XQ0000000000000000ZZ","workflow_version":3,"scheduled_time":"<aws.scheduler.scheduled-time>"}`
	if got != want {
		t.Errorf("Input:\ngot  %s\nwant %s", got, want)
	}
}

// TestPutRequest checks what Put asks the service for, as moto's
// EventBridge Scheduler stores it.
func TestPutRequest(t *testing.T) {
	api, cfg := atMoto(t)
	s, err := ebscheduler.New(api, cfg, ebscheduler.WithRetryPolicy(2*time.Hour, 7), ebscheduler.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	sc := &cardflow.Schedule{OrganizationID: "acme", WorkspaceID: "finance", WorkflowID: "01KAB3XQ0000000000000000ZZ", WorkflowVersion: 2,
		Expression: "cron(0 8 ? * MON-FRI *)", Timezone: "Europe/Berlin", State: cardflow.ScheduleActive}
	if err := s.Put(t.Context(), sc); err != nil {
		t.Fatal(err)
	}
	get := func() *scheduler.GetScheduleOutput {
		t.Helper()
		got, err := api.GetSchedule(t.Context(), &scheduler.GetScheduleInput{Name: aws.String("acme_01KAB3XQ0000000000000000ZZ"), GroupName: aws.String(cfg.GroupName)})
		if err != nil {
			t.Fatalf("no schedule named after organization and workflow in the configured group: %v", err)
		}
		return got
	}
	got := get()
	input, _ := ebscheduler.Input(sc)
	dlq := ""
	if got.Target.DeadLetterConfig != nil {
		dlq = aws.ToString(got.Target.DeadLetterConfig.Arn)
	}
	for _, c := range []struct{ what, got, want string }{
		{"expression", aws.ToString(got.ScheduleExpression), sc.Expression},
		{"time zone", aws.ToString(got.ScheduleExpressionTimezone), sc.Timezone},
		{"state", string(got.State), "ENABLED"},
		{"flexible time window", string(got.FlexibleTimeWindow.Mode), "OFF"},
		{"target", aws.ToString(got.Target.Arn), targetARN},
		{"role", aws.ToString(got.Target.RoleArn), roleARN},
		{"input", aws.ToString(got.Target.Input), input},
		{"dead-letter queue", dlq, queueARN},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.what, c.got, c.want)
		}
	}
	if rp := got.Target.RetryPolicy; rp == nil || aws.ToInt32(rp.MaximumEventAgeInSeconds) != 7200 || aws.ToInt32(rp.MaximumRetryAttempts) != 7 {
		t.Errorf("retry policy: got %+v, want 7200 seconds and 7 attempts", rp)
	}

	sc.State = cardflow.SchedulePaused
	if err := s.Put(t.Context(), sc); err != nil {
		t.Fatal(err)
	}
	if got := get(); got.State != types.ScheduleStateDisabled {
		t.Errorf("state of a PAUSED schedule: got %s, want DISABLED", got.State)
	}
}

func TestErrors(t *testing.T) {
	sc := &cardflow.Schedule{OrganizationID: "acme", WorkflowID: "01KAB3XQ0000000000000000ZZ", WorkflowVersion: 1,
		Expression: "rate(1 hour)", State: cardflow.ScheduleActive}
	for _, tc := range []struct {
		inject string
		want   string
	}{
		{"ThrottlingException", cardflow.ETHROTTLED},
		{"InternalServerException", cardflow.EUNAVAILABLE},
		{"ServiceQuotaExceededException", cardflow.EUNAVAILABLE},
		{"ValidationException", cardflow.EINVALID},
		{"AccessDeniedException", cardflow.EINTERNAL},
	} {
		srv := newServer(t)
		s := newScheduler(t, newClient(srv.URL, noRetries))
		srv.FailNext(tc.inject)
		err := s.Put(t.Context(), sc)
		if got := cardflow.ErrorCode(err); got != tc.want {
			t.Errorf("Put answered with %s: got %v, want code %s", tc.inject, err, tc.want)
		}
		if msg := cardflow.ErrorMessage(err); strings.Contains(msg, "arn:") || strings.Contains(msg, "injected") {
			t.Errorf("Put answered with %s: message %q shows the service's details", tc.inject, msg)
		}
	}

	t.Run("MissingGroup", func(t *testing.T) {
		srv := ebschedulertest.New()
		defer srv.Close()
		s := newScheduler(t, newClient(srv.URL))
		if err := s.Put(t.Context(), sc); cardflow.ErrorCode(err) != cardflow.EINTERNAL {
			t.Errorf("Put into a missing group: got %v, want INTERNAL", err)
		}
	})
	t.Run("Unreachable", func(t *testing.T) {
		srv := ebschedulertest.New()
		srv.Close()
		s := newScheduler(t, newClient(srv.URL, noRetries))
		if err := s.Put(t.Context(), sc); cardflow.ErrorCode(err) != cardflow.EUNAVAILABLE {
			t.Errorf("Put with the service down: got %v, want UNAVAILABLE", err)
		}
	})
	t.Run("DeleteMissing", func(t *testing.T) {
		srv := newServer(t)
		s := newScheduler(t, newClient(srv.URL))
		if err := s.Delete(t.Context(), sc); err != nil {
			t.Errorf("Delete of a missing schedule: %v", err)
		}
	})
	t.Run("ThrottlingRetried", func(t *testing.T) {
		srv := newServer(t)
		s := newScheduler(t, newClient(srv.URL))
		srv.FailNext("ThrottlingException")
		if err := s.Put(t.Context(), sc); err != nil {
			t.Errorf("Put after one throttled attempt: got %v, want the SDK's retry to succeed", err)
		}
	})
}

func TestNewChecksConfig(t *testing.T) {
	api := newClient("http://127.0.0.1:1")
	for _, tc := range []struct {
		what string
		cfg  ebscheduler.Config
		opts []ebscheduler.Option
	}{
		{"no target", ebscheduler.Config{RoleARN: roleARN}, nil},
		{"no role", ebscheduler.Config{TargetARN: targetARN}, nil},
		{"bad group", ebscheduler.Config{GroupName: "a/b", TargetARN: targetARN, RoleARN: roleARN}, nil},
		{"bad queue", ebscheduler.Config{TargetARN: targetARN, RoleARN: roleARN, DeadLetterARN: "queue"}, nil},
		{"short event age", config, []ebscheduler.Option{ebscheduler.WithRetryPolicy(time.Second, 3)}},
		{"too many attempts", config, []ebscheduler.Option{ebscheduler.WithRetryPolicy(time.Hour, 186)}},
	} {
		if _, err := ebscheduler.New(api, tc.cfg, tc.opts...); err == nil {
			t.Errorf("New with %s: got no error", tc.what)
		}
	}
	if _, err := ebscheduler.New(nil, config); err == nil {
		t.Error("New without a client: got no error")
	}
	s, err := ebscheduler.New(api, ebscheduler.Config{TargetARN: targetARN, RoleARN: roleARN})
	if err != nil || s == nil {
		t.Errorf("New with the default group: %v", err)
	}
}

// TestServerChecks sends requests the SDK would refuse before sending,
// and ones only the service can refuse, to the stand-in. Schedule
// expressions it leaves alone: the adapter checks them, and the contract
// suite shows that against moto.
func TestServerChecks(t *testing.T) {
	srv := newServer(t)
	api := newClient(srv.URL, noRetries)
	ctx := context.Background()
	valid := func() *scheduler.CreateScheduleInput {
		return &scheduler.CreateScheduleInput{
			Name: aws.String("s1"), GroupName: aws.String(group), ScheduleExpression: aws.String("rate(5 minutes)"),
			FlexibleTimeWindow: &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
			Target:             &types.Target{Arn: aws.String(targetARN), RoleArn: aws.String(roleARN)},
		}
	}
	errType := func(err error) string {
		var api interface{ ErrorCode() string }
		if errors.As(err, &api) {
			return api.ErrorCode()
		}
		return ""
	}
	for _, tc := range []struct {
		what   string
		change func(*scheduler.CreateScheduleInput)
		want   string
	}{
		{"bad role", func(in *scheduler.CreateScheduleInput) { in.Target.RoleArn = aws.String("role") }, "ValidationException"},
		{"long event age", func(in *scheduler.CreateScheduleInput) {
			in.Target.RetryPolicy = &types.RetryPolicy{MaximumEventAgeInSeconds: aws.Int32(90000)}
		}, "ValidationException"},
		{"flexible without window", func(in *scheduler.CreateScheduleInput) {
			in.FlexibleTimeWindow.Mode = types.FlexibleTimeWindowModeFlexible
		}, "ValidationException"},
		{"bad name", func(in *scheduler.CreateScheduleInput) { in.Name = aws.String("a b") }, "ValidationException"},
		{"missing group", func(in *scheduler.CreateScheduleInput) { in.GroupName = aws.String("nope") }, "ResourceNotFoundException"},
	} {
		in := valid()
		tc.change(in)
		if _, err := api.CreateSchedule(ctx, in); errType(err) != tc.want {
			t.Errorf("CreateSchedule with %s: got %v, want %s", tc.what, err, tc.want)
		}
	}
	if _, err := api.CreateSchedule(ctx, valid()); err != nil {
		t.Fatalf("CreateSchedule: %v", err)
	}
	if _, err := api.CreateSchedule(ctx, valid()); errType(err) != "ConflictException" {
		t.Errorf("CreateSchedule of an existing name: got %v, want ConflictException", err)
	}
	upd := &scheduler.UpdateScheduleInput{Name: aws.String("s2"), GroupName: aws.String(group), ScheduleExpression: aws.String("rate(5 minutes)"),
		FlexibleTimeWindow: valid().FlexibleTimeWindow, Target: valid().Target}
	if _, err := api.UpdateSchedule(ctx, upd); errType(err) != "ResourceNotFoundException" {
		t.Errorf("UpdateSchedule of a missing schedule: got %v, want ResourceNotFoundException", err)
	}
	if _, err := api.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String("s2"), GroupName: aws.String(group)}); errType(err) != "ResourceNotFoundException" {
		t.Errorf("GetSchedule of a missing schedule: got %v, want ResourceNotFoundException", err)
	}

	// Required members the SDK checks itself, sent as raw requests.
	for _, body := range []string{
		`{"GroupName": "cardflow-test", "ScheduleExpression": "rate(5 minutes)", "Target": {"Arn": "` + targetARN + `", "RoleArn": "` + roleARN + `"}}`,
		`{"GroupName": "cardflow-test", "FlexibleTimeWindow": {"Mode": "OFF"}, "Target": {"Arn": "` + targetARN + `", "RoleArn": "` + roleARN + `"}}`,
		`{"GroupName": "cardflow-test", "ScheduleExpression": "rate(5 minutes)", "FlexibleTimeWindow": {"Mode": "OFF"}}`,
		`{"GroupName": "cardflow-test", "ScheduleExpression": "rate(5 minutes)", "FlexibleTimeWindow": {}, "Target": {"Arn": "` + targetARN + `", "RoleArn": "` + roleARN + `"}}`,
		`{"GroupName": `,
	} {
		resp, err := http.Post(srv.URL+"/schedules/raw", "application/json", bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-amzn-ErrorType") != "ValidationException" || !bytes.Contains(msg, []byte(`"Message"`)) {
			t.Errorf("POST %s: got %d %q %s, want 400 ValidationException with a Message", body, resp.StatusCode, resp.Header.Get("x-amzn-ErrorType"), msg)
		}
	}
}
