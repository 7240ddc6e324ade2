package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// ExecutionPath is the getWorkflowExecutionById path of an execution.
func ExecutionPath(workflowID, executionID string) string {
	return "/v1/workflows/getWorkflowExecutionById?workflow_id=" + url.QueryEscape(workflowID) + "&workflow_execution_id=" + url.QueryEscape(executionID)
}

// Trigger starts one execution of a workflow version (the latest ACTIVE one
// when version is 0) with body as its input and returns its id.
func (c *Client) Trigger(ctx context.Context, workflowID string, version int, processID string, body any) (string, error) {
	var in []byte
	if body != nil {
		var err error
		if in, err = json.Marshal(body); err != nil {
			return "", err
		}
	}
	return c.trigger(ctx, c.do, 0, workflowID, version, processID, in)
}

// trigger is Trigger, with the input encoded, sent through send from
// worker w.
func (c *Client) trigger(ctx context.Context, send sender, w int, workflowID string, version int, processID string, in []byte) (string, error) {
	path := "/v1/workflows/triggerworkflow/" + url.PathEscape(workflowID)
	if version > 0 {
		path += "/" + strconv.Itoa(version)
	}
	if processID != "" {
		path += "?process_id=" + url.QueryEscape(processID)
	}
	b, err := c.call(ctx, send, w, "POST", path, in)
	if err != nil {
		return "", err
	}
	return stringAt(b, "service_execution_id")
}

// approve is the body of a resume that approves the card.
var approve = []byte(`{"decision":"approve","source":"TEAMS"}`)

// resume answers the card of the execution with process id pid, through
// send from worker w.
func (c *Client) resume(ctx context.Context, send sender, w int, pid string) error {
	_, err := c.call(ctx, send, w, "POST", "/v1/workflows/resumeworkflow/"+url.PathEscape(pid), approve)
	return err
}

// unfinished tells whether an execution of status may still change.
func unfinished(status string) bool { return (&cardflow.Execution{Status: status}).Open() }

// Triggers triggers executions of a workflow from conns connections for d
// and returns the ids of those it started.
func Triggers(ctx context.Context, c *Client, conns int, d time.Duration, workflowID string, body any) (Result, []string) {
	ids := make([][]string, conns)
	r := Run(ctx, "triggerworkflow", conns, d, func(ctx context.Context, w, _ int) error {
		id, err := c.Trigger(ctx, workflowID, 0, "", body)
		if err == nil {
			ids[w] = append(ids[w], id)
		}
		return err
	})
	var all []string
	for _, w := range ids {
		all = append(all, w...)
	}
	return r, all
}

// Outcome is where executions ended up.
type Outcome struct {
	// Statuses counts the executions by final status.
	Statuses map[string]int
	// Open are those still running or waiting when the wait gave up, Lost
	// those the service did not know.
	Open, Lost int
	// FirstProblem describes the first open or lost execution, or the
	// first error reading one.
	FirstProblem string
}

// Finished is the number of executions in a final state.
func (o Outcome) Finished() int {
	n := 0
	for _, v := range o.Statuses {
		n += v
	}
	return n
}

// AwaitFinished reads every execution from conns connections until it is
// in a final state or until deadline, and reports where they ended; of
// each answer it decodes only the status.
func AwaitFinished(ctx context.Context, c *Client, conns int, workflowID string, ids []string, deadline time.Time) Outcome {
	out := Outcome{Statuses: map[string]int{}}
	send, closeConns := c.sender()
	defer closeConns()
	var mu sync.Mutex
	note := func(status string, open, lost bool, problem string) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case lost:
			out.Lost++
		case open:
			out.Open++
		default:
			out.Statuses[status]++
		}
		if problem != "" && out.FirstProblem == "" {
			out.FirstProblem = problem
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range min(conns, len(ids)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(ids) {
					return
				}
				status, err := c.awaitOne(ctx, send, w, workflowID, ids[i], deadline)
				var se *StatusError
				switch {
				case errors.As(err, &se) && se.Status == 404:
					note("", false, true, fmt.Sprintf("execution %s: %v", ids[i], err))
				case err != nil:
					note("", true, false, fmt.Sprintf("execution %s: %v", ids[i], err))
				default:
					note(status, false, false, "")
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// awaitOne polls an execution until it is final, through send from
// worker w.
func (c *Client) awaitOne(ctx context.Context, send sender, w int, workflowID, id string, deadline time.Time) (string, error) {
	for {
		b, err := c.call(ctx, send, w, "GET", ExecutionPath(workflowID, id), nil)
		if err != nil {
			return "", err
		}
		status, err := stringAt(b, "item", "status")
		if err != nil || !unfinished(status) {
			return status, err
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("still %s at the deadline", status)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Approval names the sample approval workflow and how to drive it.
type Approval struct {
	WorkflowID string
	// Input is the trigger body; it must lead to the card step.
	Input any
	// Timeout is the card step's timeout in the version the run publishes
	// (ISO 8601, e.g. PT20S).
	Timeout string
}

// EngineResult is what RunApprovals measured.
type EngineResult struct {
	Version             int
	Executions, Resumed int
	Triggers, Resumes   Result
	// Elapsed runs from the first trigger until every execution was final.
	Elapsed time.Duration
	// Outcomes of the resumed and of the timed-out half.
	ResumedOutcome, TimedOutOutcome Outcome
}

// RunApprovals publishes a version of the approval workflow whose card
// steps time out after a.Timeout, triggers n executions of it from conns
// connections, resumes every second one through the API right after its
// trigger, lets the others time out, and waits (until deadline) for every
// execution to reach a final state.
func RunApprovals(ctx context.Context, c *Client, conns, n int, a Approval, deadline time.Time) (EngineResult, error) {
	var res EngineResult
	version, err := publishWithTimeout(ctx, c, a.WorkflowID, a.Timeout)
	if err != nil {
		return res, err
	}
	res.Version = version
	res.Executions = n
	ids := make([]string, n)
	var resumeMu sync.Mutex
	var resumes []resumeCall
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	start := time.Now()
	res.Triggers = RunN(ctx, "triggerworkflow (approval)", conns, n, func(ctx context.Context, _, i int) error {
		pid := "load-" + run + "-" + strconv.Itoa(i)
		id, err := c.Trigger(ctx, a.WorkflowID, version, pid, a.Input)
		if err != nil {
			return err
		}
		ids[i] = id
		if i%2 == 0 {
			t0 := time.Now()
			err := c.resume(ctx, c.do, 0, pid)
			resumeMu.Lock()
			resumes = append(resumes, resumeCall{time.Since(t0), err})
			resumeMu.Unlock()
		}
		return nil
	})
	res.Resumes = tallyCalls("resumeworkflow (approval)", conns, res.Triggers.Elapsed, resumes)
	var resumed, timedOut []string
	for i, id := range ids {
		switch {
		case id == "":
			// Failed to trigger: counted in res.Triggers.
		case i%2 == 0:
			resumed = append(resumed, id)
		default:
			timedOut = append(timedOut, id)
		}
	}
	res.Resumed = len(resumed)
	res.ResumedOutcome = AwaitFinished(ctx, c, conns, a.WorkflowID, resumed, deadline)
	res.TimedOutOutcome = AwaitFinished(ctx, c, conns, a.WorkflowID, timedOut, deadline)
	res.Elapsed = time.Since(start)
	return res, ctx.Err()
}

type resumeCall struct {
	lat time.Duration
	err error
}

// tallyCalls sums calls made inside another run's operation.
func tallyCalls(name string, conns int, elapsed time.Duration, calls []resumeCall) Result {
	r := Result{Name: name, Connections: conns, Elapsed: elapsed, Requests: len(calls)}
	lat := make([]time.Duration, len(calls))
	for i, call := range calls {
		lat[i] = call.lat
		if call.err == nil {
			continue
		}
		if r.FirstError == "" {
			r.FirstError = call.err.Error()
		}
		if se := (*StatusError)(nil); errors.As(call.err, &se) {
			r.Failed++
		} else {
			r.Transport++
		}
	}
	r.P50, r.P99, r.Max = percentiles(lat)
	return r
}

// publishWithTimeout saves the latest version of a workflow again with
// every card and wait step timing out after timeout, publishes it and
// returns its version.
func publishWithTimeout(ctx context.Context, c *Client, workflowID, timeout string) (int, error) {
	latest, err := latestVersion(ctx, c, workflowID)
	if err != nil {
		return 0, err
	}
	var got struct {
		Item cardflow.Workflow `json:"item"`
	}
	if err := c.Call(ctx, "GET", "/v1/workflows/getWorkflowById?workflow_id="+url.QueryEscape(workflowID)+"&workflow_version="+strconv.Itoa(latest), nil, &got); err != nil {
		return 0, fmt.Errorf("read workflow %s version %d: %w", workflowID, latest, err)
	}
	w := got.Item
	waits := 0
	for i, s := range w.WorkflowSteps {
		if s.Type == "card" || s.Type == "wait" {
			cfg := map[string]any{}
			for k, v := range s.Config {
				cfg[k] = v
			}
			cfg["timeout"] = timeout
			w.WorkflowSteps[i].Config = cfg
			waits++
		}
	}
	if waits == 0 {
		return 0, fmt.Errorf("workflow %s version %d has no card or wait step to time out", workflowID, latest)
	}
	var saved struct {
		Item cardflow.Workflow `json:"item"`
	}
	in := app.SaveWorkflowInput{
		WorkflowID: workflowID, WorkflowName: w.WorkflowName, WorkflowIntegrations: w.WorkflowIntegrations,
		WorkflowSteps: w.WorkflowSteps, WorkflowConnections: w.WorkflowConnections, WorkflowSchema: w.WorkflowSchema,
	}
	if err := c.Call(ctx, "POST", "/v1/workflows/saveWorkflow", in, &saved); err != nil {
		return 0, fmt.Errorf("save workflow %s with timeout %s: %w", workflowID, timeout, err)
	}
	v := saved.Item.WorkflowVersion
	pub := map[string]any{"workflow_id": workflowID, "workflow_version": v}
	if err := c.Call(ctx, "POST", "/v1/workflows/publishWorkflow", pub, nil); err != nil {
		return 0, fmt.Errorf("publish workflow %s version %d: %w", workflowID, v, err)
	}
	return v, nil
}

// latestVersion finds the version of a workflow marked latest in the
// organization's list.
func latestVersion(ctx context.Context, c *Client, workflowID string) (int, error) {
	path := "/v1/workflows/getOrganizationWorkflows?limit=30"
	for {
		var page struct {
			Items []struct {
				WorkflowID            string        `json:"workflow_id"`
				Latest                cardflow.Flag `json:"latest"`
				WorkflowStatusVersion string        `json:"workflow_status_version"`
			} `json:"items"`
			LastKey *struct {
				OrganizationID  string `json:"organization_id"`
				WorkflowID      string `json:"workflow_id"`
				WorkflowVersion int    `json:"workflow_version"`
			} `json:"lastKey"`
		}
		if err := c.Call(ctx, "GET", path, nil, &page); err != nil {
			return 0, fmt.Errorf("list workflows: %w", err)
		}
		for _, it := range page.Items {
			if it.WorkflowID != workflowID || !bool(it.Latest) {
				continue
			}
			// The list item names its version only in ACTIVE_3.
			sv := it.WorkflowStatusVersion
			if n, err := strconv.Atoi(sv[strings.LastIndexByte(sv, '_')+1:]); err == nil {
				return n, nil
			}
		}
		if page.LastKey == nil {
			return 0, fmt.Errorf("workflow %s not found in the organization", workflowID)
		}
		k := page.LastKey
		path = "/v1/workflows/getOrganizationWorkflows?limit=30&organization_id=" + url.QueryEscape(k.OrganizationID) +
			"&workflow_id=" + url.QueryEscape(k.WorkflowID) + "&workflow_version=" + strconv.Itoa(k.WorkflowVersion)
	}
}
