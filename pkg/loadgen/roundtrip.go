package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// WaitPath is the waitForExecution path of an execution, until it is final.
func WaitPath(workflowID, executionID string) string {
	return "/v1/workflows/waitForExecution?until=final&timeout=25&workflow_id=" + url.QueryEscape(workflowID) + "&workflow_execution_id=" + url.QueryEscape(executionID)
}

// RoundTripResult is what RoundTrips measured: whole approvals, and the
// time from sending the resume to receiving the final execution.
type RoundTripResult struct {
	// Approvals times each approval from its trigger to its final state;
	// one that did not end SUCCEEDED is a failed one.
	Approvals Result
	// ResumeToEnd times each approval from its resume request to the
	// answer of waitForExecution with the final execution.
	ResumeToEnd Result
	// Outcome is where every started execution ended, read back after
	// the run.
	Outcome Outcome
	// Started counts the executions triggered.
	Started int
}

// RoundTrips runs approvals from clients at once for d, each as a client
// would: trigger the workflow with a process id of its own (input leads to
// the card step), resume that process id, and wait with waitForExecution
// until the execution is final. Each client sends its calls over a
// connection of its own (see conns) and decodes of the answers only the
// execution id and the status. Every execution must end SUCCEEDED: after the
// run each is read back (until deadline) into Outcome.
func RoundTrips(ctx context.Context, c *Client, clients int, d time.Duration, workflowID string, input any, deadline time.Time) RoundTripResult {
	var mu sync.Mutex
	var res RoundTripResult
	var ids []string
	var resumes []resumeCall
	in, inErr := json.Marshal(input)
	send, closeConns := c.sender()
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	res.Approvals = Run(ctx, "approval round trip", clients, d, func(ctx context.Context, w, i int) error {
		if inErr != nil {
			return inErr
		}
		pid := "rt-" + run + "-" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
		id, err := c.trigger(ctx, send, w, workflowID, 0, pid, in)
		if err != nil {
			return err
		}
		mu.Lock()
		ids = append(ids, id)
		mu.Unlock()
		t0 := time.Now()
		status, err := c.resumeAndWait(ctx, send, w, workflowID, id, pid)
		mu.Lock()
		defer mu.Unlock()
		resumes = append(resumes, resumeCall{time.Since(t0), err})
		if err != nil {
			return err
		}
		if status != "SUCCEEDED" {
			return fmt.Errorf("execution %s ended %s, want SUCCEEDED", id, status)
		}
		return nil
	})
	closeConns()
	res.ResumeToEnd = tallyCalls("resume to end", clients, res.Approvals.Elapsed, resumes)
	res.Started = len(ids)
	res.Outcome = AwaitFinished(ctx, c, min(clients, 32), workflowID, ids, deadline)
	return res
}

// resumeAndWait answers the execution's card and waits until it is final,
// through send from worker w.
func (c *Client) resumeAndWait(ctx context.Context, send sender, w int, workflowID, id, pid string) (string, error) {
	if err := c.resume(ctx, send, w, pid); err != nil {
		return "", err
	}
	for {
		b, err := c.call(ctx, send, w, "GET", WaitPath(workflowID, id), nil)
		if err != nil {
			return "", err
		}
		if s, err := stringAt(b, "item", "status"); err != nil || !unfinished(s) {
			return s, err
		}
	}
}
