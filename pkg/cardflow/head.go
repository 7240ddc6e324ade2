package cardflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// ExecutionHeadStore is a Store that can read an execution's head without
// decoding its parts, though checking that they could be read: what a
// caller needs that acts on an execution by its ids, status and current
// step (a resume). Stores need not implement it.
type ExecutionHeadStore interface {
	// GetExecutionHead returns the execution as DecodeHead gives it, or
	// what GetExecution fails with: ENOTFOUND, or an error wrapping
	// ErrUnreadable when a part does not read.
	GetExecutionHead(ctx context.Context, org, workflowID, executionID string) (*Execution, error)
}

// CheckedHead decodes the head of an execution stored as head and parts,
// and checks that each part is JSON within the decoder's depth without
// decoding it: a part that fails the check would fail JoinExecution, and
// gives an UnreadableError without a head. Parts that pass it decode,
// since Split wrote them.
func CheckedHead(head []byte, parts []Part) (*Execution, error) {
	e, err := DecodeHead(head)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		known := p.Name == PartInput || p.Name == PartWorkflow || strings.HasPrefix(p.Name, PartStep)
		if !known || !json.Valid(p.Value) {
			return nil, &UnreadableError{Err: fmt.Errorf("decode execution part %s: not JSON a read can decode", p.Name)}
		}
	}
	return e, nil
}
