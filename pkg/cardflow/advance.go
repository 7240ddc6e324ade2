package cardflow

// Sleeping is the AdvanceResult status of an execution that sleeps in a
// delay step until AdvanceResult.WakeAt. Its record says WAITING.
const Sleeping = "SLEEPING"

// AdvanceResult tells a runner what to do after the engine's Advance. It
// lives here rather than in the engine so that a runner's client side
// (starting, waking, stopping executions) does not link the engine.
type AdvanceResult struct {
	// Status is RUNNING (call Advance again), WAITING (wait for Wake, or
	// call again at WakeAt for the timeout), Sleeping (call again at
	// WakeAt), or the final status of a finished execution.
	Status string `json:"status"`
	// WakeAt is when to call Advance again (epoch ms; 0: only on Wake).
	WakeAt int64 `json:"wake_at,omitempty"`
	// Wait is the open wait of a WAITING execution.
	Wait *Wait `json:"wait,omitempty"`
	// ProcessID names the process record that holds Wait.
	ProcessID string `json:"process_id,omitempty"`
}

// Done reports whether the execution has finished.
func (r AdvanceResult) Done() bool {
	return r.Status != ExecRunning && r.Status != ExecWaiting && r.Status != Sleeping
}
