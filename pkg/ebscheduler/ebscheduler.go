// Package ebscheduler is the cardflow.Scheduler on Amazon EventBridge
// Scheduler: one schedule per scheduled workflow, in one schedule group,
// whose target is the Lambda function that Target serves. It passes the
// contract suite in internal/schedulertest.
package ebscheduler

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/cardflow/cardflow/pkg/awscron"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// API is the part of *scheduler.Client the adapter calls.
type API interface {
	CreateSchedule(context.Context, *scheduler.CreateScheduleInput, ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error)
	UpdateSchedule(context.Context, *scheduler.UpdateScheduleInput, ...func(*scheduler.Options)) (*scheduler.UpdateScheduleOutput, error)
	GetSchedule(context.Context, *scheduler.GetScheduleInput, ...func(*scheduler.Options)) (*scheduler.GetScheduleOutput, error)
	DeleteSchedule(context.Context, *scheduler.DeleteScheduleInput, ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error)
}

// Config names what every schedule points at.
type Config struct {
	// GroupName is the schedule group (default "default"); it must exist.
	GroupName string
	// TargetARN is the ARN of the Lambda function that serves Target.
	TargetARN string
	// RoleARN is the role EventBridge Scheduler assumes to invoke it.
	RoleARN string
	// DeadLetterARN is the SQS queue of deliveries that failed for good;
	// empty leaves them without one.
	DeadLetterARN string
}

// Defaults of the retry policy: a run later than an hour is no longer the
// run the schedule meant, and the target is idempotent, so retrying often
// within that hour is safe.
const (
	DefaultMaxEventAge   = time.Hour
	DefaultRetryAttempts = 20
)

// ScheduledTimePlaceholder is the context attribute EventBridge Scheduler
// replaces with the run's scheduled time in a target's Input.
const ScheduledTimePlaceholder = "<aws.scheduler.scheduled-time>"

// Scheduler is a cardflow.Scheduler on EventBridge Scheduler.
type Scheduler struct {
	api         API
	cfg         Config
	maxEventAge time.Duration
	attempts    int
	log         *slog.Logger
}

var _ cardflow.Scheduler = (*Scheduler)(nil)

// Option configures New.
type Option func(*Scheduler)

// WithRetryPolicy sets how long (60 seconds to 24 hours) and how often (0
// to 185 times) EventBridge Scheduler retries a delivery that failed.
func WithRetryPolicy(maxEventAge time.Duration, attempts int) Option {
	return func(s *Scheduler) { s.maxEventAge, s.attempts = maxEventAge, attempts }
}

// WithLogger sets where the details of failed requests go (default
// slog.Default()); callers see a plain message.
func WithLogger(l *slog.Logger) Option { return func(s *Scheduler) { s.log = l } }

var (
	// namePattern is Scheduler's rule for schedule and group names.
	namePattern = regexp.MustCompile(`^[0-9a-zA-Z_.-]{1,64}$`)
	arnPattern  = regexp.MustCompile(`^arn:aws[a-z-]*:[a-z0-9-]+:[a-z0-9-]*:\d{12}:.+$`)
)

// New returns a scheduler that manages schedules through api.
func New(api API, cfg Config, opts ...Option) (*Scheduler, error) {
	if api == nil {
		return nil, errors.New("ebscheduler: API client is nil")
	}
	if cfg.GroupName == "" {
		cfg.GroupName = "default"
	}
	s := &Scheduler{api: api, cfg: cfg, maxEventAge: DefaultMaxEventAge, attempts: DefaultRetryAttempts, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	switch {
	case !namePattern.MatchString(cfg.GroupName):
		return nil, fmt.Errorf("ebscheduler: group name %q: want 1 to 64 letters, digits, '-', '_' or '.'", cfg.GroupName)
	case !arnPattern.MatchString(cfg.TargetARN):
		return nil, fmt.Errorf("ebscheduler: target ARN %q is not an ARN", cfg.TargetARN)
	case !arnPattern.MatchString(cfg.RoleARN):
		return nil, fmt.Errorf("ebscheduler: role ARN %q is not an ARN", cfg.RoleARN)
	case cfg.DeadLetterARN != "" && !arnPattern.MatchString(cfg.DeadLetterARN):
		return nil, fmt.Errorf("ebscheduler: dead-letter ARN %q is not an ARN", cfg.DeadLetterARN)
	case s.maxEventAge < time.Minute || s.maxEventAge > 24*time.Hour:
		return nil, fmt.Errorf("ebscheduler: maximum event age %s: want 1 minute to 24 hours", s.maxEventAge)
	case s.attempts < 0 || s.attempts > 185:
		return nil, fmt.Errorf("ebscheduler: %d retry attempts: want 0 to 185", s.attempts)
	case s.log == nil:
		return nil, errors.New("ebscheduler: logger is nil")
	}
	return s, nil
}

// ulidLen is the length of a workflow id.
const ulidLen = 26

// maxPlainOrg is the longest organization id a name holds as it is:
// "<org>_<workflow id>" then fits Scheduler's 64 characters.
const maxPlainOrg = 64 - 1 - ulidLen

// Name returns the schedule name of a workflow: "<organization>_<workflow
// id>". Workflow ids are ULIDs of fixed length, so the name reads back
// unambiguously. An organization id too long for that is cut and followed
// by 8 hex digits of its SHA-256; such a name is longer than any uncut one,
// so the two forms never meet.
func Name(org, workflowID string) string {
	if len(org) <= maxPlainOrg {
		return org + "_" + workflowID
	}
	sum := sha256.Sum256([]byte(org))
	return org[:maxPlainOrg-9] + "-" + hex.EncodeToString(sum[:4]) + "_" + workflowID
}

// TargetInput is what a schedule delivers to its target: which workflow
// version to run, and when the run was due.
type TargetInput struct {
	OrganizationID  string `json:"organization_id"`
	WorkspaceID     string `json:"workspace_id"`
	WorkflowID      string `json:"workflow_id"`
	WorkflowVersion int    `json:"workflow_version"`
	// ScheduledTime is the run's time, RFC 3339 in UTC; in a schedule's
	// Input it is ScheduledTimePlaceholder.
	ScheduledTime string `json:"scheduled_time"`
}

// Input returns the target Input of a schedule: its TargetInput with the
// scheduled-time placeholder, which must stay unescaped for EventBridge
// Scheduler to find it.
func Input(sc *cardflow.Schedule) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(TargetInput{
		OrganizationID: sc.OrganizationID, WorkspaceID: sc.WorkspaceID,
		WorkflowID: sc.WorkflowID, WorkflowVersion: sc.WorkflowVersion,
		ScheduledTime: ScheduledTimePlaceholder,
	})
	return string(bytes.TrimSpace(buf.Bytes())), err
}

// Put implements cardflow.Scheduler: it creates the workflow's schedule or,
// when it exists, replaces it. A PAUSED schedule is DISABLED.
func (s *Scheduler) Put(ctx context.Context, sc *cardflow.Schedule) error {
	// The expression is checked here the way the service checks it, so the
	// caller learns what is wrong with it.
	if _, err := awscron.Parse(sc.Expression, sc.Timezone); err != nil {
		return cardflow.Errorf(cardflow.EINVALID, "schedule of workflow %s: %v", sc.WorkflowID, err)
	}
	input, err := Input(sc)
	if err != nil {
		return err
	}
	state := types.ScheduleStateEnabled
	if sc.State == cardflow.SchedulePaused {
		state = types.ScheduleStateDisabled
	}
	name := Name(sc.OrganizationID, sc.WorkflowID)
	target := &types.Target{
		Arn: aws.String(s.cfg.TargetARN), RoleArn: aws.String(s.cfg.RoleARN), Input: aws.String(input),
		RetryPolicy: &types.RetryPolicy{
			MaximumEventAgeInSeconds: aws.Int32(int32(s.maxEventAge / time.Second)),
			MaximumRetryAttempts:     aws.Int32(int32(s.attempts)),
		},
	}
	if s.cfg.DeadLetterARN != "" {
		target.DeadLetterConfig = &types.DeadLetterConfig{Arn: aws.String(s.cfg.DeadLetterARN)}
	}
	desc := fmt.Sprintf("cardflow workflow %s version %d of %s", sc.WorkflowID, sc.WorkflowVersion, sc.OrganizationID)
	if len(desc) > 512 {
		desc = desc[:512]
	}
	window := &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff}
	tz := aws.String(sc.Timezone)
	if sc.Timezone == "" {
		tz = nil // UTC, as awscron reads it
	}
	// A schedule is created once and updated at every later Put; an update
	// that finds it gone (deleted meanwhile) creates it again.
	for range 3 {
		_, err = s.api.CreateSchedule(ctx, &scheduler.CreateScheduleInput{
			Name: aws.String(name), GroupName: aws.String(s.cfg.GroupName), Description: aws.String(desc),
			ScheduleExpression: aws.String(sc.Expression), ScheduleExpressionTimezone: tz,
			State: state, FlexibleTimeWindow: window, Target: target,
		})
		var conflict *types.ConflictException
		if !errors.As(err, &conflict) {
			return s.translate("CreateSchedule", sc, err)
		}
		_, err = s.api.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{
			Name: aws.String(name), GroupName: aws.String(s.cfg.GroupName), Description: aws.String(desc),
			ScheduleExpression: aws.String(sc.Expression), ScheduleExpressionTimezone: tz,
			State: state, FlexibleTimeWindow: window, Target: target,
		})
		var missing *types.ResourceNotFoundException
		if !errors.As(err, &missing) {
			return s.translate("UpdateSchedule", sc, err)
		}
	}
	return cardflow.Errorf(cardflow.ECONFLICT, "the schedule of workflow %s changed concurrently; try again", sc.WorkflowID)
}

// Delete implements cardflow.Scheduler. The workflow has one schedule,
// which a later version's Put takes over: Delete removes it only while it
// still runs the version sc names.
func (s *Scheduler) Delete(ctx context.Context, sc *cardflow.Schedule) error {
	name := aws.String(Name(sc.OrganizationID, sc.WorkflowID))
	got, err := s.api.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: name, GroupName: aws.String(s.cfg.GroupName)})
	var missing *types.ResourceNotFoundException
	if errors.As(err, &missing) {
		return nil
	}
	if err != nil {
		return s.translate("GetSchedule", sc, err)
	}
	if in, err := readInput(got.Target); err == nil && in.WorkflowVersion != sc.WorkflowVersion {
		return nil
	}
	_, err = s.api.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: name, GroupName: aws.String(s.cfg.GroupName)})
	if errors.As(err, &missing) {
		return nil
	}
	return s.translate("DeleteSchedule", sc, err)
}

// readInput decodes the TargetInput of a schedule's target.
func readInput(t *types.Target) (TargetInput, error) {
	var in TargetInput
	if t == nil || t.Input == nil {
		return in, errors.New("the schedule has no input")
	}
	err := json.Unmarshal([]byte(*t.Input), &in)
	return in, err
}
