package engine

import (
	"fmt"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/execrecord"
)

// stored returns an open execution as a store wrote it.
func stored(t *testing.T, id string) *cardflow.Execution {
	t.Helper()
	ex := &cardflow.Execution{WorkflowExecutionID: id, WorkflowID: "wf", OrganizationID: "org", Status: cardflow.ExecWaiting, Revision: 1}
	w, err := execrecord.Split(ex)
	if err != nil {
		t.Fatal(err)
	}
	execrecord.Wrote(ex, w)
	return ex
}

// The executions kept stay within the bound: a new one drops others.
func TestKeptStaysWithinItsBound(t *testing.T) {
	one := stored(t, "ex-0").StoredBytes()
	k := kept{max: 3 * one}
	for i := range 10 {
		k.put(stored(t, fmt.Sprintf("ex-%d", i)))
		if k.bytes > k.max || len(k.execs) > 3 {
			t.Fatalf("after %d: got %d executions, %d bytes, want at most 3, %d", i+1, len(k.execs), k.bytes, k.max)
		}
	}
	if got := k.take(cardflow.ExecutionRef{OrganizationID: "org", WorkflowID: "wf", ExecutionID: "ex-9", Run: 2}); got == nil {
		t.Error("the execution kept last: got none, want it, whichever run asks")
	}
	if got := k.take(cardflow.ExecutionRef{OrganizationID: "org", WorkflowID: "wf", ExecutionID: "ex-9"}); got != nil {
		t.Error("taken twice: got it again, want none")
	}
	if n := len(k.execs); k.bytes != n*one {
		t.Errorf("got %d bytes counted for %d executions, want %d", k.bytes, n, n*one)
	}
}
