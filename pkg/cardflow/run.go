package cardflow

import (
	"context"
	"encoding/json"
	"time"
)

// Event types of an execution's log.
const (
	EventStarted      = "ExecutionStarted"
	EventStepStarted  = "StepStarted"
	EventStepFinished = "StepFinished"
	EventStepFailed   = "StepFailed"
	EventWaiting      = "Waiting"
	EventSleeping     = "Sleeping"
	EventResumed      = "Resumed"
	EventTimedOut     = "TimedOut"
	EventSucceeded    = "ExecutionSucceeded"
	EventFailed       = "ExecutionFailed"
	EventCancelled    = "ExecutionCancelled"
)

// ClosedProcessTTL is how long a closed process record stays, so that a
// late resume learns that its execution finished.
const ClosedProcessTTL = 7 * 24 * time.Hour

// CloseProcess frees the process id of a finishing execution. It leaves a
// record that another execution took over alone.
func CloseProcess(ctx context.Context, s EngineStore, ex *Execution, now time.Time) error {
	for {
		p, err := s.GetProcess(ctx, ex.OrganizationID, ex.State.ProcessID)
		if ErrorCode(err) == ENOTFOUND {
			return nil
		}
		if err != nil {
			return err
		}
		if p.ExecutionID != ex.WorkflowExecutionID || p.Closed {
			return nil
		}
		p.Closed = true
		p.ExpiresAt = now.Add(ClosedProcessTTL).Unix()
		err = s.PutProcess(ctx, p)
		if ErrorCode(err) != ECONFLICT {
			return err
		}
	}
}

// ExecutionState is the engine's bookkeeping of an execution. It is stored
// with the execution but is not part of the API shape.
type ExecutionState struct {
	// StepID is the step the execution is in: the next one to run, or the
	// one it waits or sleeps in. Empty once the execution has finished.
	StepID string `json:"step_id"`
	// Phase tells what StepID is doing: "" (about to run), PhaseWaiting or
	// PhaseSleeping.
	Phase string `json:"phase,omitempty"`
	// Outputs holds every finished step's full output, for expressions.
	Outputs map[string]any `json:"outputs"`
	// ProcessID is the process id that resumes this execution's waits.
	ProcessID string `json:"process_id"`
	// WakeAt is when a sleep ends or a wait times out (epoch ms, 0: never).
	WakeAt int64 `json:"wake_at,omitempty"`
	// StepsRun counts the steps run, to stop endless loops.
	StepsRun int `json:"steps_run"`
	// Wait is the sequence number of the wait StepID waits on.
	Wait int `json:"wait,omitempty"`
	// Integrations are the workflow version's integration profiles.
	Integrations map[string]any `json:"integrations,omitempty"`
	// FailedStep is the step a FAILED or TIMED_OUT execution failed in,
	// which a redrive runs again; "" when it ended as its workflow says.
	FailedStep string `json:"failed_step,omitempty"`
	// Run counts the redrives: runners that name their runs tell them
	// apart by it (see ExecutionRef.Run).
	Run int `json:"run,omitempty"`
	// TraceParent is the W3C trace context of the execution's trace, which
	// every step joins (Observer).
	TraceParent string `json:"trace_parent,omitempty"`
}

// Phases of the current step.
const (
	PhaseWaiting  = "waiting"
	PhaseSleeping = "sleeping"
)

// Open reports whether the execution has not finished yet.
func (e *Execution) Open() bool {
	return e.Status == ExecRunning || e.Status == ExecWaiting
}

// StepName names the step id of the workflow e runs, or gives the id
// when the workflow has no such step.
func (e *Execution) StepName(id string) string {
	for _, st := range e.WorkflowDetails.WorkflowSteps {
		if st.ID == id {
			return st.Name
		}
	}
	return id
}

// Ref returns the key of the execution.
func (e *Execution) Ref() ExecutionRef {
	return ExecutionRef{OrganizationID: e.OrganizationID, WorkflowID: e.WorkflowID, ExecutionID: e.WorkflowExecutionID}
}

// ExecutionRef names one execution.
type ExecutionRef struct {
	OrganizationID string `json:"organization_id"`
	WorkflowID     string `json:"workflow_id"`
	ExecutionID    string `json:"workflow_execution_id"`
	// Run is which run of the execution a runner starts or stops: 0 the
	// first, n the one after its nth redrive. Only runners read it.
	Run int `json:"run,omitempty"`
}

// executionFields is Execution without its methods, for encoding and
// decoding it field by field.
type executionFields Execution

// withPayloads returns e's fields with both payloads objects: an execution
// that has no output yet shows {}.
func (e *Execution) withPayloads() executionFields {
	f := executionFields(*e)
	f.WorkflowInputPayload, f.WorkflowOutputPayload = PayloadOf(e.WorkflowInputPayload), PayloadOf(e.WorkflowOutputPayload)
	return f
}

// MarshalJSON encodes the execution as the API shows it.
func (e Execution) MarshalJSON() ([]byte, error) {
	return json.Marshal(e.withPayloads())
}

// UnmarshalJSON decodes the execution, and with them its state and revision
// when b is a stored record (pkg/execrecord). Payloads that are not objects,
// which records from before payloads were always objects may hold, read as
// PayloadOf makes them.
func (e *Execution) UnmarshalJSON(b []byte) error {
	*e = Execution{}
	r := struct {
		*executionFields
		Input    any             `json:"workflow_input_payload"`
		Output   any             `json:"workflow_output_payload"`
		State    *ExecutionState `json:"state"`
		Revision *int64          `json:"revision"`
	}{executionFields: (*executionFields)(e), State: &e.State, Revision: &e.Revision}
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	e.WorkflowInputPayload, e.WorkflowOutputPayload = PayloadOf(r.Input), PayloadOf(r.Output)
	return nil
}

// Process is the record of a process id: which execution it belongs to
// while that execution is open, the wait it may resume, and a resume that
// arrived before the wait opened. One record per organization and process
// id; a conditional write on Revision guards every change.
type Process struct {
	OrganizationID string `json:"organization_id"`
	ProcessID      string `json:"process_id"`
	WorkflowID     string `json:"workflow_id"`
	ExecutionID    string `json:"workflow_execution_id"`
	// Closed is set when the execution finishes; the process id may then be
	// used again.
	Closed bool `json:"closed"`
	// Wait is the wait the execution is in; nil while it is not waiting.
	Wait *Wait `json:"wait,omitempty"`
	// Early is a resume that arrived while no wait was open.
	Early *Resume `json:"early,omitempty"`
	// Waits counts the waits opened so far.
	Waits     int   `json:"waits"`
	CreatedOn int64 `json:"created_on"`
	// ExpiresAt is when a closed record may be dropped (epoch seconds, the
	// unit DynamoDB's TTL reads).
	ExpiresAt int64 `json:"expires_at,omitempty"`
	Revision  int64 `json:"revision"`
}

// Wait is an open wait of a card or wait step.
type Wait struct {
	// Seq numbers the waits of one execution, from 1.
	Seq      int    `json:"seq"`
	StepID   string `json:"step_id"`
	OpenedOn int64  `json:"opened_on"`
	// Deadline is when the wait times out (epoch ms, 0: never).
	Deadline int64 `json:"deadline,omitempty"`
	// Token is the runner's handle on the wait (a Step Functions task token).
	Token string `json:"token,omitempty"`
	// Resume is set once the wait is claimed by a resume; TimedOut once it
	// is claimed by its deadline. Either claims it for good.
	Resume   *Resume `json:"resume,omitempty"`
	TimedOut bool    `json:"timed_out,omitempty"`
	// Nudged asks the runner to Advance once more without a claim, when
	// the step's timers have work (a reassignment) and the runner held no
	// token to be woken by; its next park clears it and ends at once.
	Nudged bool `json:"nudged,omitempty"`
}

// Claimed reports whether a resume or the deadline has claimed the wait.
func (w *Wait) Claimed() bool { return w.Resume != nil || w.TimedOut }

// Resume sources.
const (
	SourceTeams = "TEAMS"
	SourceSAP   = "SAP"
)

// Resume is the answer that ends a wait.
type Resume struct {
	Source     string `json:"source,omitempty"`
	Payload    any    `json:"payload"`
	Actor      string `json:"actor"`
	ReceivedOn int64  `json:"received_on"`
}

// Idempotency remembers which execution a trigger with an Idempotency-Key
// started, so that a retried request starts nothing twice.
type Idempotency struct {
	OrganizationID string `json:"organization_id"`
	Key            string `json:"key"`
	// RequestHash identifies the request (workflow, version, body); the same
	// key with another request is a conflict.
	RequestHash string `json:"request_hash"`
	WorkflowID  string `json:"workflow_id"`
	ExecutionID string `json:"workflow_execution_id"`
	CreatedOn   int64  `json:"created_on"`
	// ExpiresAt is when the record stops counting (epoch seconds).
	ExpiresAt int64 `json:"expires_at"`
}

// Schedule states.
const (
	ScheduleActive = "ACTIVE"
	SchedulePaused = "PAUSED"
)

// Schedule is the schedule of a published workflow version whose trigger is
// SCHEDULE. A workflow has at most one: publishing another scheduled version
// replaces it.
type Schedule struct {
	OrganizationID  string `json:"organization_id"`
	WorkspaceID     string `json:"workspace_id"`
	WorkflowID      string `json:"workflow_id"`
	WorkflowVersion int    `json:"workflow_version"`
	Expression      string `json:"expression"`
	Timezone        string `json:"timezone"`
	State           string `json:"state"`
	CreatedOn       int64  `json:"created_on"`
	ModifiedOn      int64  `json:"modified_on"`
}

// Due kinds of a process record, for the housekeeping index adapters keep.
const (
	DueWait   = "wait"
	DueEarly  = "early"
	DueClosed = "closed"
)

// Due returns what housekeeping will have to do with a process record, and
// from when (epoch ms): time out its wait, drop its early resume, or delete
// it. ok is false when there is nothing.
func (p *Process) Due() (kind string, at int64, ok bool) {
	switch {
	case p.Closed:
		return DueClosed, p.ExpiresAt * 1000, p.ExpiresAt > 0
	case p.Wait != nil && !p.Wait.Claimed() && p.Wait.Deadline > 0:
		return DueWait, p.Wait.Deadline, true
	case p.Early != nil:
		return DueEarly, p.Early.ReceivedOn, true
	}
	return "", 0, false
}

// Delivery is an adaptive card sent by a card step. CardPayload is the card
// version's template expanded with Data; CardID and CardVersion name it.
type Delivery struct {
	DeliveryID     string         `json:"delivery_id"`
	OrganizationID string         `json:"organization_id"`
	WorkflowID     string         `json:"workflow_id"`
	ExecutionID    string         `json:"workflow_execution_id"`
	StepID         string         `json:"step_id"`
	ProcessID      string         `json:"process_id"`
	CardID         string         `json:"card_id"`
	CardVersion    int            `json:"card_version"`
	CardPayload    map[string]any `json:"card_payload"`
	Data           any            `json:"data"`
	CreatedOn      int64          `json:"created_on"`
	// Wait is the sequence number of the wait the card answers, so an
	// answer to an old card cannot resume a later wait.
	Wait int `json:"wait"`
	// Teams is the step's delivery profile (see TeamsProfile).
	Teams map[string]any `json:"teams,omitempty"`
	// ApprovalID and Approvers are set on the card of an approval step.
	ApprovalID string   `json:"approval_id,omitempty"`
	Approvers  []string `json:"approvers,omitempty"`
	// Approver is who this copy of an approval's card is for: each
	// approver gets one, whose response links answer as them.
	Approver string `json:"approver,omitempty"`
	// Notice says why an approval's card goes out again (NoticeReminder,
	// NoticeAdded); "" on the first.
	Notice string `json:"notice,omitempty"`
	// RequestedBy is who asked for the approval (Approval.TriggeredBy),
	// which its copies show.
	RequestedBy string `json:"requested_by,omitempty"`
}

// DeliveryLink is one button of a card as a response link. A delivery
// never holds one: an approver's personal links answer as them, so they
// are made only for the card sent to them, or for an admin who asks
// (app's IssueApprovalLinks), and are never stored.
type DeliveryLink struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}
