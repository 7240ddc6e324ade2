package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/jsonschema"
)

// IdempotencyWindow is how long an Idempotency-Key keeps its execution.
const IdempotencyWindow = 24 * time.Hour

var (
	processIDPattern   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$`)
	idempotencyPattern = regexp.MustCompile(`^[\x21-\x7e]{1,255}$`)
	clientTokenPattern = regexp.MustCompile(`^[\x21-\x7e]{1,200}$`)
)

// TriggerInput is a triggerworkflow request.
type TriggerInput struct {
	WorkflowID string
	// Version is the version to run; 0 runs the latest ACTIVE one.
	Version        int
	ProcessID      string
	IdempotencyKey string
	// Body is the request body as sent: any JSON, or nothing.
	Body []byte
}

// TriggerOutput names the execution a trigger started.
type TriggerOutput struct {
	ExecutionID string
	// Replayed is set when an Idempotency-Key found an earlier execution.
	Replayed bool
}

// Trigger starts an execution of a workflow.
func (s *Runs) Trigger(ctx context.Context, in TriggerInput) (*TriggerOutput, error) {
	p, err := principal(ctx, cardflow.ScopeExecute)
	if err != nil {
		return nil, err
	}
	if in.ProcessID != "" && !processIDPattern.MatchString(in.ProcessID) {
		return nil, cardflow.Errorf(cardflow.EINVALID, "process_id must be 1 to 128 letters, digits or . _ : @ - and start with a letter or digit")
	}
	if in.IdempotencyKey != "" && !idempotencyPattern.MatchString(in.IdempotencyKey) {
		return nil, cardflow.Errorf(cardflow.EINVALID, "the Idempotency-Key header must be 1 to 255 visible ASCII characters")
	}
	input, body, err := decodeInput(in.Body)
	if err != nil {
		return nil, err
	}
	var idem *cardflow.Idempotency
	if in.IdempotencyKey != "" {
		sum := sha256.Sum256([]byte(in.WorkflowID + "\n" + strconv.Itoa(in.Version) + "\n" + in.ProcessID + "\n" + string(body)))
		idem = &cardflow.Idempotency{OrganizationID: p.OrganizationID, Key: in.IdempotencyKey, RequestHash: hex.EncodeToString(sum[:])}
		if out, err := s.replay(ctx, idem); out != nil || err != nil {
			return out, err
		}
	}
	wf, err := s.runnableVersion(ctx, p.OrganizationID, in.WorkflowID, in.Version)
	if err != nil {
		return nil, err
	}
	id, err := s.start(ctx, start{
		workspace: p.WorkspaceID, actor: p.Actor, requester: p.Requester(), workflow: wf, trigger: cardflow.TriggerRequest,
		input: input, processID: in.ProcessID, idem: idem,
	})
	if cardflow.ErrorCode(err) == cardflow.ECONFLICT && idem != nil {
		// The same key may have won a race with this request.
		if out, rerr := s.replay(ctx, idem); out != nil || rerr != nil {
			return out, rerr
		}
	}
	if err != nil {
		return nil, err
	}
	return &TriggerOutput{ExecutionID: id}, nil
}

// decodeInput reads a trigger body as the execution's input: a JSON object
// as it is, nothing as {}, and any other JSON value (openapi.yaml takes any)
// wrapped as cardflow.PayloadOf wraps it ({"value": [1]}). It returns the
// compact body for request hashing.
func decodeInput(body []byte) (map[string]any, []byte, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return map[string]any{}, nil, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, body); err != nil {
		return nil, nil, cardflow.Errorf(cardflow.EINVALID, "the body is not valid JSON: %v", err)
	}
	var v any
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
		return nil, nil, cardflow.Errorf(cardflow.EINVALID, "the body is not valid JSON: %v", err)
	}
	return cardflow.PayloadOf(v), buf.Bytes(), nil
}

// replay returns the execution an earlier request with the same key
// started, a conflict if that request differed, or nothing.
func (s *Runs) replay(ctx context.Context, idem *cardflow.Idempotency) (*TriggerOutput, error) {
	prev, err := s.store.GetIdempotency(ctx, idem.OrganizationID, idem.Key, s.millis())
	switch {
	case cardflow.ErrorCode(err) == cardflow.ENOTFOUND:
		return nil, nil
	case err != nil:
		return nil, err
	case prev.RequestHash != idem.RequestHash:
		return nil, cardflow.Errorf(cardflow.ECONFLICT, "Idempotency-Key %s was used within the last 24 hours for a different request (workflow, version, process_id or body)", idem.Key)
	}
	// The first request may have lost its answer after the execution was
	// stored and before the runner had it, which is why the caller retries.
	// Handing it over again is harmless: a runner wakes an execution it
	// already runs, and one that has finished ends at once.
	ref := cardflow.ExecutionRef{OrganizationID: idem.OrganizationID, WorkflowID: prev.WorkflowID, ExecutionID: prev.ExecutionID}
	if err := s.runner.Start(ctx, ref); err != nil {
		return nil, err
	}
	return &TriggerOutput{ExecutionID: prev.ExecutionID, Replayed: true}, nil
}

// runnableVersion returns the version to run: the given one, which must be
// ACTIVE, or the latest version when it is ACTIVE.
func (s *Runs) runnableVersion(ctx context.Context, org, workflowID string, version int) (*cardflow.Workflow, error) {
	if version == 0 {
		wf, err := s.store.GetLatestWorkflow(ctx, org, workflowID)
		if err != nil {
			return nil, err
		}
		if wf.WorkflowStatus != cardflow.StatusActive {
			return nil, cardflow.Errorf(cardflow.ECONFLICT, "workflow %s has no ACTIVE version: publish one first", workflowID)
		}
		return wf, nil
	}
	wf, err := s.store.GetWorkflow(ctx, org, workflowID, version)
	if err != nil {
		return nil, err
	}
	if wf.WorkflowStatus != cardflow.StatusActive {
		return nil, cardflow.Errorf(cardflow.ECONFLICT, "workflow %s version %d is a %s: publish it before running it", workflowID, version, wf.WorkflowStatus)
	}
	return wf, nil
}

// start is what every trigger needs to create an execution.
type start struct {
	workspace, actor string
	workflow         *cardflow.Workflow
	trigger          string
	input            map[string]any
	processID        string
	idem             *cardflow.Idempotency
	// id is the execution id; empty gives a new one.
	id string
	// requester is the execution's TriggeredBy.
	requester string
}

// start creates the execution with its process record (and idempotency
// record) in one change, records the input as the version's schema sample
// in that change too, and hands the execution to the runner.
func (s *Runs) start(ctx context.Context, st start) (_ string, err error) {
	now := s.now()
	wf := st.workflow
	if err := checkInput(wf, st.input); err != nil {
		return "", err
	}
	if ctx, err = s.withOpenLimit(ctx, wf.OrganizationID); err != nil {
		return "", err
	}
	id := st.id
	if id == "" {
		id = cardflow.NewID(now)
	}
	pid := st.processID
	if pid == "" {
		pid = id
	}
	var trigger cardflow.Step
	for _, step := range wf.WorkflowSteps {
		if step.Type == cardflow.StepTrigger {
			trigger = step
		}
	}
	ms := now.UnixMilli()
	ex := &cardflow.Execution{
		WorkflowExecutionID: id, WorkflowID: wf.WorkflowID, WorkflowVersion: wf.WorkflowVersion,
		OrganizationID: wf.OrganizationID, WorkspaceID: st.workspace,
		WorkflowCurrentState: trigger.Name, WorkflowTriggerType: st.trigger, TriggeredBy: st.requester, Status: cardflow.ExecRunning,
		WorkflowEventLog:      cardflow.EventLog{Events: []cardflow.Event{{At: ms, Type: cardflow.EventStarted, Message: "by " + st.actor}}, Total: 1},
		CondensedLogs:         map[string]cardflow.StepLog{},
		WorkflowInputPayload:  st.input,
		WorkflowOutputPayload: map[string]any{},
		WorkflowDetails: cardflow.WorkflowDetails{
			WorkflowName: wf.WorkflowName, WorkflowSteps: wf.WorkflowSteps, WorkflowConnections: wf.WorkflowConnections,
		},
		CreatedOn: ms, ModifiedOn: ms,
		State: cardflow.ExecutionState{StepID: trigger.ID, ProcessID: pid, Outputs: map[string]any{}, Integrations: wf.WorkflowIntegrations},
	}
	proc := &cardflow.Process{OrganizationID: wf.OrganizationID, ProcessID: pid, WorkflowID: wf.WorkflowID, ExecutionID: id, CreatedOn: ms}
	if st.idem != nil {
		st.idem.WorkflowID, st.idem.ExecutionID = wf.WorkflowID, id
		st.idem.CreatedOn, st.idem.ExpiresAt = ms, now.Add(IdempotencyWindow).Unix()
	}
	ctx = s.observe.ExecutionStarting(ctx, ex)
	defer func() { s.observe.ExecutionStarted(ctx, ex, err) }()
	// The sample is best effort: one that cannot be made now is made by
	// the next trigger.
	sample, _ := s.sample(ctx, wf, st.input, st.actor, ms)
	// One write for both.
	serr := s.store.StartExecutionWithSample(ctx, ex, proc, st.idem, sample)
	if serr != nil && !s.storedAnyway(ctx, ex, serr) {
		return "", unreadable(serr, "a stored record this execution needs cannot be read (that of process id %s, or of the Idempotency-Key), so it cannot start", pid)
	} else if k, ok := s.runner.(cardflow.ExecutionKeeper); ok && serr == nil {
		// The runner's first Advance need not read back what was just
		// written.
		k.Keep(ex)
	}
	if err := s.runner.Start(ctx, ex.Ref()); err != nil {
		return "", err
	}
	return id, nil
}

// storedAnyway reports whether a start that failed because the store did
// not answer was written all the same (its answer lost on the way back), so
// that a stored execution is not left without a runner.
func (s *Runs) storedAnyway(ctx context.Context, ex *cardflow.Execution, err error) bool {
	if cardflow.ErrorCode(err) != cardflow.EUNAVAILABLE {
		return false
	}
	_, gerr := s.store.GetExecution(ctx, ex.OrganizationID, ex.WorkflowID, ex.WorkflowExecutionID)
	return gerr == nil
}

// sample gives the schema record a trigger with input leaves for
// getWorkflowSchemaById: the latest input of the version and its inferred
// schema. It is nil when the record is to stay as it is: an empty input
// (a trigger without a body) replaces no input that says more, and a
// trigger that brings the input the record holds, by the actor it names,
// would change modified_on alone, for a synced write on the trigger's way
// to its answer.
func (s *Runs) sample(ctx context.Context, wf *cardflow.Workflow, input map[string]any, actor string, now int64) (*cardflow.Schema, error) {
	prev, err := s.store.GetSchema(ctx, wf.OrganizationID, wf.WorkflowID, wf.WorkflowVersion)
	switch {
	case err == nil && len(input) == 0 && len(prev.WorkflowMockPayload) > 0:
		return nil, nil
	case err == nil && sameSample(prev, input, actor):
		return nil, nil
	}
	sc := &cardflow.Schema{
		OrganizationID: wf.OrganizationID, WorkflowID: wf.WorkflowID, WorkflowVersion: wf.WorkflowVersion,
		WorkflowMockPayload: input, WorkflowSchema: jsonschema.Infer(input),
		CreatedBy: actor, CreatedOn: now, ModifiedOn: now,
	}
	switch {
	case err == nil:
		sc.CreatedBy, sc.CreatedOn, sc.ModifiedBy = prev.CreatedBy, prev.CreatedOn, &actor
	case cardflow.ErrorCode(err) != cardflow.ENOTFOUND:
		return nil, err
	}
	return sc, nil
}

// sameSample reports whether the schema record holds input as its sample,
// last recorded by actor. The inputs are compared as JSON, which orders
// object keys, so the same input decoded twice compares equal.
func sameSample(prev *cardflow.Schema, input map[string]any, actor string) bool {
	last := prev.CreatedBy
	if prev.ModifiedBy != nil {
		last = *prev.ModifiedBy
	}
	if last != actor {
		return false
	}
	had, err := json.Marshal(prev.WorkflowMockPayload)
	if err != nil {
		return false
	}
	got, err := json.Marshal(input)
	return err == nil && bytes.Equal(had, got)
}

// ResumeActions lists the {action} values of POST /v1/workflows/{action}/{process_id}.
var ResumeActions = []string{"resumeworkflow"}

// ResumeOutput is the answer to a resume.
type ResumeOutput struct {
	Message            string `json:"message"`
	ServiceExecutionID string `json:"service_execution_id"`
	WorkflowID         string `json:"workflow_id"`
	// Status and WorkflowCurrentState are the execution's once the resume
	// is done: RUNNING from the step it waited in when the resume claimed
	// its wait (the runner goes on in the background), and as they were
	// when the resume was kept for a wait not yet open.
	Status               string `json:"status"`
	WorkflowCurrentState string `json:"workflow_current_state"`
	// Resumed is false when the resume was kept for a wait not yet open.
	Resumed bool `json:"resumed"`
}

// Resume passes body on to the execution waiting on processID, or keeps it
// for the wait the execution is on its way to.
func (s *Runs) Resume(ctx context.Context, processID string, body []byte) (*ResumeOutput, error) {
	p, err := principal(ctx, cardflow.ScopeExecute)
	if err != nil {
		return nil, err
	}
	payload, err := decodeResume(body)
	if err != nil {
		return nil, err
	}
	src, _ := payload["source"].(string)
	res := &cardflow.Resume{Source: src, Payload: payload, Actor: p.Actor, ReceivedOn: s.millis()}
	for {
		proc, err := s.store.GetProcess(ctx, p.OrganizationID, processID)
		if err != nil {
			return nil, unreadable(err, "the record of process id %s cannot be read from the store, so it cannot be resumed", processID)
		}
		if err := s.refuseApprovalResume(ctx, proc); err != nil {
			return nil, err
		}
		// Read before the claim is written: once it is, the resume has
		// happened, and a failed read must not answer an error that makes
		// the caller's retry a conflict.
		ex, err := s.store.GetExecutionHead(ctx, proc.OrganizationID, proc.WorkflowID, proc.ExecutionID)
		if err != nil {
			return nil, unreadable(err, "execution %s of process id %s cannot be read from the store, so it cannot be resumed", proc.ExecutionID, processID)
		}
		resumed, err := s.claim(proc, res)
		if err != nil {
			return nil, err
		}
		err = s.store.PutProcess(ctx, proc)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue
		}
		if err != nil {
			return nil, err
		}
		ref := cardflow.ExecutionRef{OrganizationID: proc.OrganizationID, WorkflowID: proc.WorkflowID, ExecutionID: proc.ExecutionID}
		if resumed {
			if err := s.runner.Wake(ctx, ref, proc.Wait); err != nil {
				return nil, err
			}
			if src == cardflow.SourceTeams && proc.Wait != nil {
				// A card step's answer: the card went out as its wait opened.
				decision, _ := payload["decision"].(string)
				s.observe.CardAnswered(ctx, proc.OrganizationID, decision, time.Duration(res.ReceivedOn-proc.Wait.OpenedOn)*time.Millisecond)
			}
		}
		out := &ResumeOutput{
			Message: "success", ServiceExecutionID: ex.WorkflowExecutionID, WorkflowID: ex.WorkflowID,
			Status: cardflow.ExecRunning, WorkflowCurrentState: ex.WorkflowCurrentState, Resumed: resumed,
		}
		if !resumed {
			out.Status = ex.Status
			out.Message = fmt.Sprintf("kept: the execution has not reached a wait yet; the resume is delivered when it does, within %s", s.earlyResume)
		}
		return out, nil
	}
}

// refuseApprovalResume refuses a resume of a process that waits in an
// approval step, or is about to (its record is made before its wait
// opens): only its approvers decide it, or an admin by overrideApproval.
func (s *Runs) refuseApprovalResume(ctx context.Context, proc *cardflow.Process) error {
	if proc.Closed || proc.Wait != nil && proc.Wait.Claimed() {
		return nil // claim answers why nothing is resumed
	}
	seq := proc.Waits + 1
	if proc.Wait != nil {
		seq = proc.Wait.Seq
	}
	a, err := s.store.GetApproval(ctx, proc.OrganizationID, cardflow.ApprovalIDOf(proc.ExecutionID, seq))
	switch {
	case cardflow.ErrorCode(err) == cardflow.ENOTFOUND:
		return nil
	case err != nil:
		return unreadable(err, "the approval of process id %s cannot be read from the store, so it cannot be resumed", proc.ProcessID)
	}
	return cardflow.Errorf(cardflow.EFORBIDDEN, "process id %s waits in approval step %q, which only its approvers decide: "+
		"they answer through POST /v1/approvals/answerApproval (approval_id %s); an admin may decide without them through POST /v1/approvals/overrideApproval",
		proc.ProcessID, a.StepName, a.ApprovalID)
}

// claim applies a resume to a process record: it claims the open wait, or
// keeps the resume for the next wait. It reports whether a wait was claimed.
func (s *Runs) claim(proc *cardflow.Process, res *cardflow.Resume) (bool, error) {
	switch w := proc.Wait; {
	case proc.Closed:
		return false, cardflow.Errorf(cardflow.ECONFLICT, "the execution %s of process id %s has finished; there is nothing to resume", proc.ExecutionID, proc.ProcessID)
	case w != nil && w.Resume != nil:
		return false, cardflow.Errorf(cardflow.ECONFLICT, "the wait of step %s for process id %s was already resumed", w.StepID, proc.ProcessID)
	case w != nil && (w.TimedOut || (w.Deadline > 0 && res.ReceivedOn >= w.Deadline)):
		// Past the deadline the wait is over even before the runner marks it
		// so: the Step Functions task that holds it may have ended.
		return false, cardflow.Errorf(cardflow.ECONFLICT, "the wait of step %s for process id %s has timed out", w.StepID, proc.ProcessID)
	case w != nil:
		w.Resume = res
		return true, nil
	case proc.Early != nil && res.ReceivedOn-proc.Early.ReceivedOn <= s.earlyResume.Milliseconds():
		return false, cardflow.Errorf(cardflow.ECONFLICT, "a resume for process id %s is already kept for the execution's next wait", proc.ProcessID)
	}
	proc.Early = res
	return false, nil
}

// decodeResume reads a resume body: a JSON object (or nothing) whose
// optional source is TEAMS or SAP.
func decodeResume(body []byte) (map[string]any, error) {
	payload := map[string]any{}
	if len(bytes.TrimSpace(body)) > 0 {
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return nil, cardflow.Errorf(cardflow.EINVALID, "the body is not valid JSON: %v", err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, cardflow.Errorf(cardflow.EINVALID, "the body must be a JSON object")
		}
		payload = m
	}
	if src, ok := payload["source"]; ok {
		if src != cardflow.SourceTeams && src != cardflow.SourceSAP {
			return nil, cardflow.Errorf(cardflow.EINVALID, "source must be TEAMS or SAP when present")
		}
	}
	return payload, nil
}

// CancelInput is the body of cancelExecution.
type CancelInput struct {
	WorkflowID          string `json:"workflow_id"`
	WorkflowExecutionID string `json:"workflow_execution_id"`
	Reason              string `json:"reason"`
}

// Cancelled is what Cancel answers: the outline of the cancelled execution,
// and the execution itself only to a key that may read executions.
type Cancelled struct {
	cardflow.ExecutionOutline
	// Execution is the cancelled execution with its payloads and logs when
	// the key has the read scope; nil otherwise.
	Execution *cardflow.Execution
}

// Cancel ends a running or waiting execution as CANCELLED and closes its
// wait.
func (s *Runs) Cancel(ctx context.Context, in CancelInput) (*Cancelled, error) {
	p, err := principal(ctx, cardflow.ScopeExecute)
	if err != nil {
		return nil, err
	}
	if in.WorkflowID == "" || in.WorkflowExecutionID == "" {
		return nil, cardflow.Errorf(cardflow.EINVALID, "workflow_id and workflow_execution_id are required")
	}
	if len(in.Reason) > 1000 {
		return nil, cardflow.Errorf(cardflow.EINVALID, "reason is longer than 1000 characters")
	}
	for {
		ex, err := s.store.GetExecution(ctx, p.OrganizationID, in.WorkflowID, in.WorkflowExecutionID)
		if err != nil {
			return nil, unreadable(err, "execution %s cannot be read from the store, so it cannot be cancelled", in.WorkflowExecutionID)
		}
		if !ex.Open() {
			return nil, cardflow.Errorf(cardflow.ECONFLICT, "execution %s has already finished as %s", ex.WorkflowExecutionID, ex.Status)
		}
		if err := cardflow.CloseProcess(ctx, s.store, ex, s.now()); err != nil {
			return nil, unreadable(err, "the record of process id %s of execution %s cannot be read from the store, so it cannot be cancelled", ex.State.ProcessID, ex.WorkflowExecutionID)
		}
		now := s.millis()
		msg := "by " + p.Actor
		if in.Reason != "" {
			msg += ": " + in.Reason
		}
		ex.Status = cardflow.ExecCancelled
		ex.ModifiedBy, ex.ModifiedOn = &p.Actor, max(now, ex.ModifiedOn+1)
		ex.WorkflowOutputPayload = map[string]any{"cancelled_by": p.Actor, "reason": in.Reason}
		ex.State.Phase, ex.State.WakeAt = "", 0
		ex.WorkflowEventLog.Events = append(ex.WorkflowEventLog.Events, cardflow.Event{At: now, Type: cardflow.EventCancelled, StepID: ex.State.StepID, Step: ex.WorkflowCurrentState, Message: msg})
		ex.WorkflowEventLog.Total++
		err = s.store.PutExecution(ctx, ex)
		if cardflow.ErrorCode(err) == cardflow.ECONFLICT {
			continue // the execution moved on meanwhile
		}
		if err != nil {
			return nil, err
		}
		if s.notify != nil {
			s.notify.ExecutionChanged(ex.Ref())
		}
		s.observe.ExecutionEnded(ctx, ex)
		s.cancelApproval(ctx, ex, ex.State.Wait)
		if err := s.runner.Stop(ctx, ex.RunRef()); err != nil {
			return nil, err
		}
		out := &Cancelled{ExecutionOutline: ex.Outline()}
		if p.Has(cardflow.ScopeRead) {
			out.Execution = ex
		}
		return out, nil
	}
}

// unreadable answers a request that needs a record the store holds but
// cannot decode with a conflict that says which: the record stays as it
// is, so trying again cannot help (the runner ends an execution that
// needs it as FAILED). Other errors pass unchanged.
func unreadable(err error, format string, args ...any) error {
	if errors.Is(err, cardflow.ErrUnreadable) {
		return cardflow.Errorf(cardflow.ECONFLICT, format, args...)
	}
	return err
}
