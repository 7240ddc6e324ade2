// Package sfnfake is a Step Functions service on loopback for tests. It
// speaks the AWS JSON 1.0 protocol of the real service, so the AWS SDK's
// client talks to it unchanged (sfn.NewFromConfig with BaseEndpoint set to
// URL), and it runs one state machine definition itself, with the Lambda
// functions it invokes bound to Go functions.
//
// It supports StartExecution, SendTaskSuccess, SendTaskFailure,
// StopExecution and DescribeExecution with the real error names
// (ExecutionAlreadyExists, ExecutionDoesNotExist, StateMachineDoesNotExist,
// InvalidName, InvalidExecutionInput, InvalidToken, TaskDoesNotExist,
// TaskTimedOut, InvalidOutput). Of the Amazon States Language it runs Task
// (arn:aws:states:::lambda:invoke and its .waitForTaskToken form, with
// Parameters, ResultSelector, ResultPath, TimeoutSeconds[Path], Retry and
// Catch), Choice on StringEquals, Wait (Seconds, TimestampPath), Succeed and
// Fail, and refuses a definition that uses anything else. It counts state
// transitions (every state entered and every retry, as Step Functions
// bills them) and Lambda invocations per execution.
package sfnfake

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Func is a Lambda function: it gets the invocation's payload and returns
// the function's result. An error is a function error; its Go type name is
// the error name, as the Go Lambda runtime reports it.
type Func func(ctx context.Context, payload []byte) ([]byte, error)

// Execution statuses.
const (
	StatusRunning   = "RUNNING"
	StatusSucceeded = "SUCCEEDED"
	StatusFailed    = "FAILED"
	StatusAborted   = "ABORTED"
)

// Counts are what one execution cost.
type Counts struct {
	// Transitions counts the states entered and the retries.
	Transitions int
	// Invocations counts Lambda invocations, per function ARN.
	Invocations map[string]int
}

// Config describes the one state machine a Server runs.
type Config struct {
	// Definition is the state machine's ASL.
	Definition []byte
	// Substitutions replace ${name} in Definition, as
	// DefinitionSubstitutions of AWS::Serverless::StateMachine do.
	Substitutions map[string]string
	// Functions binds Lambda function ARNs to Go functions.
	Functions map[string]Func
	// Name names the state machine (default "runner").
	Name string
	// RetryScale multiplies every Retry delay (default 1), so that a test
	// can use up a definition's retries in moments.
	RetryScale float64
}

// Server is the fake service. Close stops it and every execution.
type Server struct {
	URL string
	// StateMachineARN names the state machine.
	StateMachineARN string

	def    *definition
	funcs  map[string]Func
	scale  float64
	srv    *http.Server
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	execs map[string]*execution // by ARN
	tasks map[string]*task      // by token
}

type execution struct {
	arn, name, input string
	status           string
	start, stop      time.Time
	output           string
	errName, cause   string
	counts           Counts
	cancel           context.CancelFunc
}

type task struct {
	done   chan struct{}
	closed bool
	// result, or errName and cause.
	output         string
	errName, cause string
}

const region, account = "us-east-1", "123456789012"

// New starts a server on a loopback port.
func New(cfg Config) (*Server, error) {
	src := string(cfg.Definition)
	for k, v := range cfg.Substitutions {
		src = strings.ReplaceAll(src, "${"+k+"}", v)
	}
	if i := strings.Index(src, "${"); i >= 0 {
		return nil, fmt.Errorf("sfnfake: the definition has a substitution with no value near %q", src[i:min(len(src), i+40)])
	}
	def, err := parseDefinition([]byte(src))
	if err != nil {
		return nil, fmt.Errorf("sfnfake: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	name := cfg.Name
	if name == "" {
		name = "runner"
	}
	s := &Server{
		URL:             "http://" + ln.Addr().String(),
		StateMachineARN: fmt.Sprintf("arn:aws:states:%s:%s:stateMachine:%s", region, account, name),
		def:             def, funcs: cfg.Functions, scale: cfg.RetryScale,
		execs: map[string]*execution{}, tasks: map[string]*task{},
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }() // ends with ErrServerClosed on Close
	return s, nil
}

// Close stops the server and every running execution.
func (s *Server) Close() error {
	s.cancel()
	err := s.srv.Close()
	s.wg.Wait()
	return err
}

// Counts returns the counts of the execution named name.
func (s *Server) Counts(name string) (Counts, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ex := s.execs[s.executionARN(name)]
	if ex == nil {
		return Counts{}, false
	}
	c := Counts{Transitions: ex.counts.Transitions, Invocations: map[string]int{}}
	for k, v := range ex.counts.Invocations {
		c.Invocations[k] = v
	}
	return c, true
}

// Status returns the status of the execution named name ("" if none).
func (s *Server) Status(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ex := s.execs[s.executionARN(name)]; ex != nil {
		return ex.status
	}
	return ""
}

func (s *Server) executionARN(name string) string {
	return strings.Replace(s.StateMachineARN, ":stateMachine:", ":execution:", 1) + ":" + name
}

// apiError is an error answer of the service.
type apiError struct {
	status  int
	typ     string
	message string
}

func (e *apiError) Error() string { return e.typ + ": " + e.message }

func fail(typ, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: typ, message: fmt.Sprintf(format, args...)}
}

const targetPrefix = "AWSStepFunctions."

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	var out any
	err := func() error {
		if r.Method != http.MethodPost || r.URL.Path != "/" {
			return &apiError{status: http.StatusNotFound, typ: "UnknownOperationException", message: "POST / only"}
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/x-amz-json-1.0" {
			return fail("SerializationException", "Content-Type %q, want application/x-amz-json-1.0", ct)
		}
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
			return &apiError{status: http.StatusForbidden, typ: "MissingAuthenticationTokenException", message: "the request is not signed"}
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			return fail("SerializationException", "%v", err)
		}
		op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), targetPrefix)
		if !ok {
			return fail("UnknownOperationException", "X-Amz-Target %q", r.Header.Get("X-Amz-Target"))
		}
		switch op {
		case "StartExecution":
			var in struct{ StateMachineArn, Name, Input string }
			if err := decode(body, &in); err != nil {
				return err
			}
			out, err = s.startExecution(in.StateMachineArn, in.Name, in.Input)
		case "SendTaskSuccess":
			var in struct{ TaskToken, Output string }
			if err := decode(body, &in); err != nil {
				return err
			}
			if !json.Valid([]byte(in.Output)) {
				return fail("InvalidOutput", "the output is not JSON")
			}
			out, err = struct{}{}, s.endTask(in.TaskToken, in.Output, "", "")
		case "SendTaskFailure":
			var in struct{ TaskToken, Error, Cause string }
			if err := decode(body, &in); err != nil {
				return err
			}
			out, err = struct{}{}, s.endTask(in.TaskToken, "", in.Error, in.Cause)
		case "StopExecution":
			var in struct{ ExecutionArn, Error, Cause string }
			if err := decode(body, &in); err != nil {
				return err
			}
			out, err = s.stopExecution(in.ExecutionArn, in.Error, in.Cause)
		case "DescribeExecution":
			var in struct{ ExecutionArn string }
			if err := decode(body, &in); err != nil {
				return err
			}
			out, err = s.describeExecution(in.ExecutionArn)
		default:
			return fail("UnknownOperationException", "operation %s is not supported", op)
		}
		return err
	}()
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = &apiError{status: http.StatusInternalServerError, typ: "InternalServerError", message: err.Error()}
		}
		w.WriteHeader(ae.status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.swf.service.v2.model#" + ae.typ, "message": ae.message})
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

func decode(body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		return fail("SerializationException", "the body is not the operation's JSON: %v", err)
	}
	return nil
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

func epoch(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

func (s *Server) startExecution(smARN, name, input string) (any, error) {
	if smARN != s.StateMachineARN {
		return nil, fail("StateMachineDoesNotExist", "State Machine Does Not Exist: '%s'", smARN)
	}
	if !namePattern.MatchString(name) {
		return nil, fail("InvalidName", "Invalid Name: '%s'", name)
	}
	if input == "" {
		input = "{}"
	}
	var data any
	if err := json.Unmarshal([]byte(input), &data); err != nil {
		return nil, fail("InvalidExecutionInput", "Invalid State Machine Execution Input: %v", err)
	}
	arn := s.executionARN(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if ex := s.execs[arn]; ex != nil {
		// The same name and input while running is the same request again.
		if ex.status == StatusRunning && ex.input == input {
			return map[string]any{"executionArn": arn, "startDate": epoch(ex.start)}, nil
		}
		return nil, fail("ExecutionAlreadyExists", "Execution Already Exists: '%s'", arn)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	ex := &execution{arn: arn, name: name, input: input, status: StatusRunning, start: time.Now(), cancel: cancel,
		counts: Counts{Invocations: map[string]int{}}}
	s.execs[arn] = ex
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer cancel()
		s.run(ctx, ex, data)
	}()
	return map[string]any{"executionArn": arn, "startDate": epoch(ex.start)}, nil
}

func (s *Server) stopExecution(arn, errName, cause string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ex := s.execs[arn]
	if ex == nil {
		return nil, fail("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", arn)
	}
	if ex.status == StatusRunning {
		ex.status, ex.stop, ex.errName, ex.cause = StatusAborted, time.Now(), errName, cause
		ex.cancel()
	}
	return map[string]any{"stopDate": epoch(ex.stop)}, nil
}

func (s *Server) describeExecution(arn string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ex := s.execs[arn]
	if ex == nil {
		return nil, fail("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", arn)
	}
	out := map[string]any{
		"executionArn": arn, "stateMachineArn": s.StateMachineARN, "name": ex.name,
		"status": ex.status, "startDate": epoch(ex.start), "input": ex.input,
	}
	if ex.status != StatusRunning {
		out["stopDate"] = epoch(ex.stop)
	}
	if ex.status == StatusSucceeded {
		out["output"] = ex.output
	}
	if ex.errName != "" {
		out["error"], out["cause"] = ex.errName, ex.cause
	}
	return out, nil
}

const tokenPrefix = "sfnfake1."

func newToken() string {
	b := make([]byte, 48)
	rand.Read(b)
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// endTask ends a waitForTaskToken task with output, or with an error.
func (s *Server) endTask(token, output, errName, cause string) error {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if _, err := base64.RawURLEncoding.DecodeString(rest); !ok || err != nil {
		return fail("InvalidToken", "Invalid token")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tasks[token]
	if t == nil {
		return fail("TaskDoesNotExist", "Task does not exist anymore")
	}
	if t.closed {
		return fail("TaskTimedOut", "Task Timed Out: the task has timed out or has already been closed")
	}
	t.closed, t.output, t.errName, t.cause = true, output, errName, cause
	close(t.done)
	return nil
}

// stateError is how a state failed: an error name and cause, as Retry
// and Catch see them.
type stateError struct{ name, cause string }

func (e *stateError) Error() string { return e.name + ": " + e.cause }

func (s *Server) count(ex *execution, fn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fn == "" {
		ex.counts.Transitions++
	} else {
		ex.counts.Invocations[fn]++
	}
}

// finish records the end of an execution, unless it was stopped first.
func (s *Server) finish(ex *execution, status, output, errName, cause string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ex.status != StatusRunning {
		return
	}
	ex.status, ex.stop, ex.output, ex.errName, ex.cause = status, time.Now(), output, errName, cause
}

// run interprets the definition for one execution.
func (s *Server) run(ctx context.Context, ex *execution, data any) {
	ctxObj := map[string]any{
		"Execution":    map[string]any{"Id": ex.arn, "Name": ex.name, "Input": data, "StartTime": ex.start.UTC().Format(time.RFC3339Nano)},
		"StateMachine": map[string]any{"Id": s.StateMachineARN, "Name": s.StateMachineARN[strings.LastIndex(s.StateMachineARN, ":")+1:]},
	}
	name := s.def.StartAt
	for {
		if ctx.Err() != nil {
			return // stopped
		}
		st := s.def.States[name]
		s.count(ex, "")
		ctxObj["State"] = map[string]any{"Name": name, "EnteredTime": time.Now().UTC().Format(time.RFC3339Nano)}
		var next string
		var err error
		switch st.Type {
		case "Succeed":
			out, _ := json.Marshal(data)
			s.finish(ex, StatusSucceeded, string(out), "", "")
			return
		case "Fail":
			s.finish(ex, StatusFailed, "", st.Error, st.Cause)
			return
		case "Choice":
			next, err = choose(st, data, ctxObj)
		case "Wait":
			err = wait(ctx, st, data, ctxObj)
			next = st.Next
		case "Task":
			data, next, err = s.runTask(ctx, ex, st, data, ctxObj)
		}
		if ctx.Err() != nil {
			return
		}
		var se *stateError
		if errors.As(err, &se) {
			s.finish(ex, StatusFailed, "", se.name, se.cause)
			return
		}
		if err != nil {
			s.finish(ex, StatusFailed, "", "States.Runtime", err.Error())
			return
		}
		if next == "" {
			out, _ := json.Marshal(data)
			s.finish(ex, StatusSucceeded, string(out), "", "")
			return
		}
		name = next
	}
}

func choose(st *state, data, ctxObj any) (string, error) {
	for _, c := range st.Choices {
		v, err := pathValue(c.Variable, data, ctxObj)
		if err != nil {
			continue // a missing variable matches no string comparison
		}
		if sv, ok := v.(string); ok && sv == c.StringEquals {
			return c.Next, nil
		}
	}
	if st.Default == "" {
		return "", &stateError{"States.NoChoiceMatched", "no choice rule matched and there is no Default"}
	}
	return st.Default, nil
}

func wait(ctx context.Context, st *state, data, ctxObj any) error {
	d := time.Duration(st.Seconds) * time.Second
	if st.TimestampPath != "" {
		v, err := pathValue(st.TimestampPath, data, ctxObj)
		if err != nil {
			return err
		}
		ts, _ := v.(string)
		at, err := time.Parse(time.RFC3339, ts)
		if err != nil {
			return fmt.Errorf("TimestampPath %s: %q is not an ISO 8601 timestamp", st.TimestampPath, ts)
		}
		d = time.Until(at)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return nil
}

// runTask runs a Task state with its retriers and catchers, and returns the
// state's output and the next state.
func (s *Server) runTask(ctx context.Context, ex *execution, st *state, data any, ctxObj map[string]any) (any, string, error) {
	attempts := make([]int, len(st.Retry))
	for {
		result, err := s.attempt(ctx, ex, st, data, ctxObj)
		if err == nil {
			if st.ResultSelector != nil {
				if result, err = applyTemplate(st.ResultSelector, result, ctxObj); err != nil {
					return nil, "", err
				}
			}
			out, err := applyResultPath(st.ResultPath, data, result)
			return out, st.Next, err
		}
		var se *stateError
		if !errors.As(err, &se) {
			return nil, "", err // a runtime error: neither retried nor caught
		}
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		if delay, ok := retryDelay(st.Retry, attempts, se.name); ok {
			if s.scale > 0 {
				delay = time.Duration(float64(delay) * s.scale)
			}
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, "", ctx.Err()
			case <-t.C:
			}
			s.count(ex, "")
			continue
		}
		for _, c := range st.Catch {
			if matches(c.ErrorEquals, se.name) {
				rp := c.ResultPath
				if rp == nil {
					dollar := "$"
					rp = &dollar
				}
				out, err := applyResultPath(rp, data, map[string]any{"Error": se.name, "Cause": se.cause})
				return out, c.Next, err
			}
		}
		return nil, "", se
	}
}

// retryDelay finds the first retrier matching the error and says how long
// to wait before the next attempt, or that none is left.
func retryDelay(retry []retrier, attempts []int, name string) (time.Duration, bool) {
	for i, r := range retry {
		if !matches(r.ErrorEquals, name) {
			continue
		}
		maxAttempts, interval, backoff := 3, 1.0, 2.0
		if r.MaxAttempts != nil {
			maxAttempts = *r.MaxAttempts
		}
		if r.IntervalSeconds != nil {
			interval = *r.IntervalSeconds
		}
		if r.BackoffRate != nil {
			backoff = *r.BackoffRate
		}
		if attempts[i] >= maxAttempts {
			return 0, false
		}
		secs := interval * math.Pow(backoff, float64(attempts[i]))
		if r.MaxDelaySeconds > 0 {
			secs = min(secs, r.MaxDelaySeconds)
		}
		if r.JitterStrategy == "FULL" {
			secs *= mathrand.Float64()
		}
		attempts[i]++
		return time.Duration(secs * float64(time.Second)), true
	}
	return 0, false
}

// attempt runs a Task once: it invokes the function and, for
// .waitForTaskToken, waits for the token to come back.
func (s *Server) attempt(ctx context.Context, ex *execution, st *state, data any, ctxObj map[string]any) (any, error) {
	var tok *task
	var token string
	if st.Resource == lambdaInvokeToken {
		token = newToken()
		tok = &task{done: make(chan struct{})}
		s.mu.Lock()
		s.tasks[token] = tok
		s.mu.Unlock()
		ctxObj["Task"] = map[string]any{"Token": token}
		defer func() {
			s.mu.Lock()
			tok.closed = true
			s.mu.Unlock()
			delete(ctxObj, "Task")
		}()
	}
	timeout := time.Duration(99999999) * time.Second
	if st.TimeoutSeconds > 0 {
		timeout = time.Duration(st.TimeoutSeconds) * time.Second
	}
	if st.TimeoutSecondsPath != "" {
		// Resolved against the state input.
		v, err := pathValue(st.TimeoutSecondsPath, data, ctxObj)
		if err != nil {
			return nil, err
		}
		n, ok := v.(float64)
		if !ok || n < 1 || n != math.Trunc(n) {
			return nil, fmt.Errorf("TimeoutSecondsPath %s: %v is not a positive integer", st.TimeoutSecondsPath, v)
		}
		timeout = time.Duration(n) * time.Second
	}
	params, err := applyTemplate(st.Parameters, data, ctxObj)
	if err != nil {
		return nil, err
	}
	p, _ := params.(map[string]any)
	fnARN, _ := p["FunctionName"].(string)
	fn := s.funcs[fnARN]
	if fn == nil {
		return nil, &stateError{"Lambda.ResourceNotFoundException", "Function not found: " + fnARN}
	}
	payload, err := json.Marshal(p["Payload"])
	if err != nil {
		return nil, err
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s.count(ex, fnARN)
	res, ferr := fn(tctx, payload)
	if tctx.Err() != nil && ctx.Err() == nil {
		return nil, &stateError{"States.Timeout", "the task timed out"}
	}
	if ferr != nil {
		// The cause is what the Lambda runtime reports, as JSON.
		cause, _ := json.Marshal(map[string]string{"errorMessage": ferr.Error(), "errorType": errorType(ferr)})
		return nil, &stateError{errorType(ferr), string(cause)}
	}
	var out any
	if len(res) > 0 {
		if err := json.Unmarshal(res, &out); err != nil {
			return nil, &stateError{"Lambda.Unknown", "the function's result is not JSON"}
		}
	}
	if tok == nil {
		return map[string]any{"ExecutedVersion": "$LATEST", "Payload": out, "StatusCode": 200}, nil
	}
	select {
	case <-tctx.Done():
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &stateError{"States.Timeout", "the task timed out"}
	case <-tok.done:
	}
	if tok.errName != "" {
		return nil, &stateError{tok.errName, tok.cause}
	}
	var v any
	err = json.Unmarshal([]byte(tok.output), &v)
	return v, err
}

// errorType names a function error the way the Go Lambda runtime does: by
// the error's type, without package or pointer.
func errorType(err error) string {
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}
