// Package ebschedulertest is a stand-in for Amazon EventBridge Scheduler on
// loopback, for what moto (which the adapter's contract tests run against)
// cannot do: answer a request with an error chosen by the test (FailNext),
// and deliver a schedule's input as the service does (Deliver). It speaks
// the service's restJson1 protocol for schedules (POST, PUT, GET and DELETE
// /schedules/{Name}), checks the members of requests as the service
// documents them, and answers errors the service's way: the error type in
// the x-amzn-ErrorType header, {"Message": ...} in the body. It does not
// read schedule expressions: checked with the project's own parser, it could
// never find a mistake of that parser. The real SDK client talks to it with
// BaseEndpoint set to its URL.
package ebschedulertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Account and region of the ARNs the server makes.
const (
	Account = "123456789012"
	Region  = "us-east-1"
)

// Schedule is a schedule as the server holds it, in the service's JSON
// shape.
type Schedule struct {
	Arn                        string             `json:"Arn"`
	Name                       string             `json:"Name"`
	GroupName                  string             `json:"GroupName"`
	Description                string             `json:"Description,omitempty"`
	ScheduleExpression         string             `json:"ScheduleExpression"`
	ScheduleExpressionTimezone string             `json:"ScheduleExpressionTimezone,omitempty"`
	State                      string             `json:"State"`
	ActionAfterCompletion      string             `json:"ActionAfterCompletion"`
	FlexibleTimeWindow         FlexibleTimeWindow `json:"FlexibleTimeWindow"`
	Target                     Target             `json:"Target"`
	CreationDate               float64            `json:"CreationDate"`
	LastModificationDate       float64            `json:"LastModificationDate"`
}

// FlexibleTimeWindow is the window a run may start in.
type FlexibleTimeWindow struct {
	Mode                   string `json:"Mode"`
	MaximumWindowInMinutes *int   `json:"MaximumWindowInMinutes,omitempty"`
}

// Target is what a schedule invokes.
type Target struct {
	Arn              string            `json:"Arn"`
	RoleArn          string            `json:"RoleArn"`
	Input            *string           `json:"Input,omitempty"`
	RetryPolicy      *RetryPolicy      `json:"RetryPolicy,omitempty"`
	DeadLetterConfig *DeadLetterConfig `json:"DeadLetterConfig,omitempty"`
}

// RetryPolicy says how long and how often a failed delivery is retried.
type RetryPolicy struct {
	MaximumEventAgeInSeconds *int `json:"MaximumEventAgeInSeconds,omitempty"`
	MaximumRetryAttempts     *int `json:"MaximumRetryAttempts,omitempty"`
}

// DeadLetterConfig names the queue of deliveries that failed for good.
type DeadLetterConfig struct {
	Arn *string `json:"Arn,omitempty"`
}

// request is the body of CreateSchedule and UpdateSchedule.
type request struct {
	ActionAfterCompletion      *string             `json:"ActionAfterCompletion"`
	ClientToken                *string             `json:"ClientToken"`
	Description                *string             `json:"Description"`
	EndDate                    *float64            `json:"EndDate"`
	StartDate                  *float64            `json:"StartDate"`
	FlexibleTimeWindow         *FlexibleTimeWindow `json:"FlexibleTimeWindow"`
	GroupName                  *string             `json:"GroupName"`
	KmsKeyArn                  *string             `json:"KmsKeyArn"`
	ScheduleExpression         *string             `json:"ScheduleExpression"`
	ScheduleExpressionTimezone *string             `json:"ScheduleExpressionTimezone"`
	State                      *string             `json:"State"`
	Target                     *Target             `json:"Target"`
}

// Server is the stand-in. Its zero value is not usable; call New.
type Server struct {
	*httptest.Server

	mu        sync.Mutex
	groups    map[string]bool
	schedules map[string]*Schedule // group + "/" + name
	tokens    map[string]string    // client token -> ARN of the schedule it created
	failures  []string             // error types to answer the next requests with
}

// New starts a server with the "default" schedule group. Close stops it.
func New() *Server {
	s := &Server{
		groups: map[string]bool{"default": true}, schedules: map[string]*Schedule{},
		tokens: map[string]string{},
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// AddGroup creates a schedule group.
func (s *Server) AddGroup(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[name] = true
}

// FailNext makes the next request fail with errorType (ThrottlingException,
// InternalServerException, ...), with the status the service gives it.
func (s *Server) FailNext(errorType string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, errorType)
}

// Schedule returns a stored schedule.
func (s *Server) Schedule(group, name string) (Schedule, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.schedules[group+"/"+name]
	if !ok {
		return Schedule{}, false
	}
	return *sc, true
}

// Deliver returns the Input the schedule's target receives for the run at
// at: the context attributes the service knows replaced, as it does.
func (s *Server) Deliver(group, name string, at time.Time, attempt int) (string, error) {
	sc, ok := s.Schedule(group, name)
	if !ok {
		return "", fmt.Errorf("no schedule %s in group %s", name, group)
	}
	if sc.State != "ENABLED" {
		return "", fmt.Errorf("schedule %s is %s", name, sc.State)
	}
	if sc.Target.Input == nil {
		return "", nil
	}
	return strings.NewReplacer(
		"<aws.scheduler.scheduled-time>", at.UTC().Format(time.RFC3339),
		"<aws.scheduler.schedule-arn>", sc.Arn,
		"<aws.scheduler.attempt-number>", fmt.Sprint(attempt),
	).Replace(*sc.Target.Input), nil
}

// statuses of the service's error types.
var statuses = map[string]int{
	"ValidationException":           http.StatusBadRequest,
	"ResourceNotFoundException":     http.StatusNotFound,
	"ConflictException":             http.StatusConflict,
	"ServiceQuotaExceededException": http.StatusPaymentRequired,
	"ThrottlingException":           http.StatusTooManyRequests,
	"InternalServerException":       http.StatusInternalServerError,
}

type apiError struct{ typ, msg string }

func fail(typ, format string, args ...any) *apiError {
	return &apiError{typ: typ, msg: fmt.Sprintf(format, args...)}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.EscapedPath(), "/schedules/")
	op := map[string]string{http.MethodPost: "CreateSchedule", http.MethodPut: "UpdateSchedule",
		http.MethodGet: "GetSchedule", http.MethodDelete: "DeleteSchedule"}[r.Method]
	if !ok || op == "" || strings.Contains(name, "/") {
		writeError(w, fail("UnknownOperationException", "no operation %s %s", r.Method, r.URL.Path))
		return
	}
	name, err := url.PathUnescape(name)
	if err != nil {
		writeError(w, fail("ValidationException", "the schedule name in the path is not escaped correctly"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failures) > 0 {
		typ := s.failures[0]
		s.failures = s.failures[1:]
		writeError(w, fail(typ, "injected %s", typ))
		return
	}
	var out any
	var aerr *apiError
	switch op {
	case "CreateSchedule", "UpdateSchedule":
		var req request
		dec := json.NewDecoder(r.Body)
		if err := dec.Decode(&req); err != nil {
			writeError(w, fail("ValidationException", "the request body is not valid JSON: %v", err))
			return
		}
		out, aerr = s.write(op == "CreateSchedule", name, &req)
	case "GetSchedule":
		out, aerr = s.get(name, r.URL.Query().Get("groupName"))
	case "DeleteSchedule":
		out, aerr = s.delete(name, r.URL.Query().Get("groupName"), r.URL.Query().Get("clientToken"))
	}
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func writeError(w http.ResponseWriter, e *apiError) {
	status, ok := statuses[e.typ]
	if !ok {
		status = http.StatusBadRequest
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-ErrorType", e.typ)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"Message": e.msg})
}

var (
	namePattern   = regexp.MustCompile(`^[0-9a-zA-Z_.-]{1,64}$`)
	tokenPattern  = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	rolePattern   = regexp.MustCompile(`^arn:aws(-[a-z]+)?:iam::\d{12}:role/[\w+=,.@/-]+$`)
	queuePattern  = regexp.MustCompile(`^arn:aws(-[a-z]+)?:sqs:[a-z0-9-]+:\d{12}:[a-zA-Z0-9_-]+$`)
	targetPattern = regexp.MustCompile(`^arn:aws(-[a-z]+)?:[a-z0-9-]+:[a-z0-9-]*:\d{12}:.+$`)
)

// group checks a group name, "" being the default group, and that the
// group exists.
func (s *Server) group(name string) (string, *apiError) {
	if name == "" {
		name = "default"
	}
	if !namePattern.MatchString(name) {
		return "", fail("ValidationException", "1 validation error detected: Value '%s' at 'groupName' failed to satisfy constraint: Member must satisfy regular expression pattern: [0-9a-zA-Z-_.]+ and have length between 1 and 64", name)
	}
	if !s.groups[name] {
		return "", fail("ResourceNotFoundException", "Schedule group %s does not exist.", name)
	}
	return name, nil
}

func checkName(name string) *apiError {
	if !namePattern.MatchString(name) {
		return fail("ValidationException", "1 validation error detected: Value '%s' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: [0-9a-zA-Z-_.]+ and have length between 1 and 64", name)
	}
	return nil
}

// check validates a create or update request as the service does.
func check(req *request) *apiError {
	invalid := func(format string, args ...any) *apiError { return fail("ValidationException", format, args...) }
	switch {
	case req.ScheduleExpression == nil:
		return invalid("1 validation error detected: Value null at 'scheduleExpression' failed to satisfy constraint: Member must not be null")
	case len(*req.ScheduleExpression) < 1 || len(*req.ScheduleExpression) > 256:
		return invalid("1 validation error detected: Value at 'scheduleExpression' failed to satisfy constraint: Member must have length between 1 and 256")
	case req.ScheduleExpressionTimezone != nil && (len(*req.ScheduleExpressionTimezone) < 1 || len(*req.ScheduleExpressionTimezone) > 50):
		return invalid("1 validation error detected: Value at 'scheduleExpressionTimezone' failed to satisfy constraint: Member must have length between 1 and 50")
	case req.FlexibleTimeWindow == nil:
		return invalid("1 validation error detected: Value null at 'flexibleTimeWindow' failed to satisfy constraint: Member must not be null")
	case req.Target == nil:
		return invalid("1 validation error detected: Value null at 'target' failed to satisfy constraint: Member must not be null")
	case req.ClientToken != nil && !tokenPattern.MatchString(*req.ClientToken):
		return invalid("1 validation error detected: Value at 'clientToken' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9-_]+ and have length between 1 and 64")
	case req.Description != nil && len(*req.Description) > 512:
		return invalid("1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 512")
	case req.State != nil && *req.State != "ENABLED" && *req.State != "DISABLED":
		return invalid("1 validation error detected: Value '%s' at 'state' failed to satisfy constraint: Member must satisfy enum value set: [ENABLED, DISABLED]", *req.State)
	case req.ActionAfterCompletion != nil && *req.ActionAfterCompletion != "NONE" && *req.ActionAfterCompletion != "DELETE":
		return invalid("1 validation error detected: Value '%s' at 'actionAfterCompletion' failed to satisfy constraint: Member must satisfy enum value set: [NONE, DELETE]", *req.ActionAfterCompletion)
	}
	switch ftw := req.FlexibleTimeWindow; ftw.Mode {
	case "OFF":
	case "FLEXIBLE":
		if ftw.MaximumWindowInMinutes == nil || *ftw.MaximumWindowInMinutes < 1 || *ftw.MaximumWindowInMinutes > 1440 {
			return invalid("MaximumWindowInMinutes must be between 1 and 1440 when Mode is FLEXIBLE.")
		}
	case "":
		return invalid("1 validation error detected: Value null at 'flexibleTimeWindow.mode' failed to satisfy constraint: Member must not be null")
	default:
		return invalid("1 validation error detected: Value '%s' at 'flexibleTimeWindow.mode' failed to satisfy constraint: Member must satisfy enum value set: [OFF, FLEXIBLE]", ftw.Mode)
	}
	t := req.Target
	switch {
	case t.Arn == "" || len(t.Arn) > 1600 || !targetPattern.MatchString(t.Arn):
		return invalid("Invalid target ARN %s.", t.Arn)
	case !rolePattern.MatchString(t.RoleArn):
		return invalid("1 validation error detected: Value '%s' at 'target.roleArn' failed to satisfy constraint: Member must satisfy regular expression pattern: ^arn:aws(-[a-z]+)?:iam::\\d{12}:role\\/[\\w+=,.@\\/-]+$", t.RoleArn)
	case t.Input != nil && (len(*t.Input) < 1 || len(*t.Input) > 8192):
		return invalid("1 validation error detected: Value at 'target.input' failed to satisfy constraint: Member must have length between 1 and 8192")
	case t.DeadLetterConfig != nil && (t.DeadLetterConfig.Arn == nil || !queuePattern.MatchString(*t.DeadLetterConfig.Arn)):
		return invalid("1 validation error detected: Value at 'target.deadLetterConfig.arn' failed to satisfy constraint: Member must satisfy regular expression pattern: ^arn:aws(-[a-z]+)?:sqs:[a-z0-9\\-]+:\\d{12}:[a-zA-Z0-9\\-_]+$")
	}
	if rp := t.RetryPolicy; rp != nil {
		if a := rp.MaximumEventAgeInSeconds; a != nil && (*a < 60 || *a > 86400) {
			return invalid("1 validation error detected: Value '%d' at 'target.retryPolicy.maximumEventAgeInSeconds' failed to satisfy constraint: Member must have value between 60 and 86400", *a)
		}
		if a := rp.MaximumRetryAttempts; a != nil && (*a < 0 || *a > 185) {
			return invalid("1 validation error detected: Value '%d' at 'target.retryPolicy.maximumRetryAttempts' failed to satisfy constraint: Member must have value between 0 and 185", *a)
		}
	}
	return nil
}

func (s *Server) write(create bool, name string, req *request) (any, *apiError) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	groupName := ""
	if req.GroupName != nil {
		groupName = *req.GroupName
	}
	group, aerr := s.group(groupName)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := check(req); aerr != nil {
		return nil, aerr
	}
	key := group + "/" + name
	old, exists := s.schedules[key]
	arn := fmt.Sprintf("arn:aws:scheduler:%s:%s:schedule/%s/%s", Region, Account, group, name)
	if req.ClientToken != nil {
		// A retried request with the same token succeeds again.
		if prev, ok := s.tokens[*req.ClientToken]; ok && prev == arn && exists {
			return map[string]string{"ScheduleArn": arn}, nil
		}
	}
	switch {
	case create && exists:
		return nil, fail("ConflictException", "Schedule %s already exists.", name)
	case !create && !exists:
		return nil, fail("ResourceNotFoundException", "Schedule %s does not exist.", name)
	}
	now := float64(time.Now().UnixMilli()) / 1000
	sc := &Schedule{
		Arn: arn, Name: name, GroupName: group, State: "ENABLED", ActionAfterCompletion: "NONE",
		ScheduleExpression: *req.ScheduleExpression, FlexibleTimeWindow: *req.FlexibleTimeWindow, Target: *req.Target,
		CreationDate: now, LastModificationDate: now,
	}
	if exists {
		sc.CreationDate = old.CreationDate
	}
	if req.ScheduleExpressionTimezone != nil {
		sc.ScheduleExpressionTimezone = *req.ScheduleExpressionTimezone
	}
	if req.State != nil {
		sc.State = *req.State
	}
	if req.ActionAfterCompletion != nil {
		sc.ActionAfterCompletion = *req.ActionAfterCompletion
	}
	if req.Description != nil {
		sc.Description = *req.Description
	}
	s.schedules[key] = sc
	if req.ClientToken != nil {
		s.tokens[*req.ClientToken] = arn
	}
	return map[string]string{"ScheduleArn": arn}, nil
}

func (s *Server) get(name, groupName string) (any, *apiError) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	group, aerr := s.group(groupName)
	if aerr != nil {
		return nil, aerr
	}
	sc, ok := s.schedules[group+"/"+name]
	if !ok {
		return nil, fail("ResourceNotFoundException", "Schedule %s does not exist.", name)
	}
	return sc, nil
}

func (s *Server) delete(name, groupName, token string) (any, *apiError) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if token != "" && !tokenPattern.MatchString(token) {
		return nil, fail("ValidationException", "1 validation error detected: Value at 'clientToken' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9-_]+ and have length between 1 and 64")
	}
	group, aerr := s.group(groupName)
	if aerr != nil {
		return nil, aerr
	}
	key := group + "/" + name
	if _, ok := s.schedules[key]; !ok {
		return nil, fail("ResourceNotFoundException", "Schedule %s does not exist.", name)
	}
	delete(s.schedules, key)
	return struct{}{}, nil
}
