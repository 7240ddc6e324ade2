package engine

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// DefaultKeptBytes bounds the executions an engine keeps between Advance
// calls, counted as stored (cardflow.Execution.StoredBytes): thousands of
// approvals in flight, a few times that in memory.
const DefaultKeptBytes = 8 << 20

// WithKeptBytes bounds the executions the engine keeps between Advance
// calls (default DefaultKeptBytes); 0 keeps none, and every Advance reads
// its execution whole.
func WithKeptBytes(n int) Option { return func(e *Engine) { e.kept.max = n } }

// kept holds executions as this engine last stored them, or read them, so
// that the next Advance of one reads its revision alone rather than the
// whole execution: a runner advances an execution again and again, and
// reading and decoding it each time was a tenth of the server's work per
// approval. An Advance takes its execution out and puts it back only when
// all it changed is stored, so what is kept is always what the store held
// at the revision it carries; any other writer (a cancel, a redrive, a
// runner elsewhere) raises the revision, and the execution is read again.
type kept struct {
	mu    sync.Mutex
	max   int
	bytes int
	execs map[cardflow.ExecutionRef]keptExecution
}

type keptExecution struct {
	ex   *cardflow.Execution
	size int
}

// take removes the execution of ref and returns it, or nil.
func (k *kept) take(ref cardflow.ExecutionRef) *cardflow.Execution {
	ref.Run = 0 // the key names the execution, whichever run
	k.mu.Lock()
	defer k.mu.Unlock()
	ke, ok := k.execs[ref]
	if !ok {
		return nil
	}
	delete(k.execs, ref)
	k.bytes -= ke.size
	return ke.ex
}

// put keeps ex, dropping others at random when the bound is reached.
func (k *kept) put(ex *cardflow.Execution) {
	size := ex.StoredBytes()
	if size == 0 || size > k.max {
		return
	}
	ref := ex.Ref()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.execs == nil {
		k.execs = map[cardflow.ExecutionRef]keptExecution{}
	}
	if old, ok := k.execs[ref]; ok {
		delete(k.execs, ref)
		k.bytes -= old.size
	}
	for r, old := range k.execs {
		if k.bytes+size <= k.max {
			break
		}
		delete(k.execs, r)
		k.bytes -= old.size
	}
	k.execs[ref] = keptExecution{ex: ex, size: size}
	k.bytes += size
}

var _ cardflow.ExecutionKeeper = (*Engine)(nil)

// Keep keeps a copy of an execution just stored by someone else (a
// trigger), for its first Advance. The copy has maps and an event log of
// its own, which the engine changes in place; the payloads and the
// workflow it shares are only ever replaced.
func (e *Engine) Keep(ex *cardflow.Execution) {
	if ex.Revision == 0 || !ex.Open() {
		return
	}
	c := *ex
	c.CondensedLogs = maps.Clone(ex.CondensedLogs)
	c.State.Outputs = maps.Clone(ex.State.Outputs)
	c.WorkflowEventLog.Events = slices.Clone(ex.WorkflowEventLog.Events)
	e.kept.put(&c)
}

// read returns the execution of ref: the one kept, when the store says it
// is still at the kept revision, or else the one stored.
func (e *Engine) read(ctx context.Context, ref cardflow.ExecutionRef) (*cardflow.Execution, error) {
	if ex := e.kept.take(ref); ex != nil {
		rev, err := e.store.GetExecutionRevision(ctx, ref.OrganizationID, ref.WorkflowID, ref.ExecutionID)
		if err == nil && rev == ex.Revision {
			return ex, nil
		}
	}
	return e.store.GetExecution(ctx, ref.OrganizationID, ref.WorkflowID, ref.ExecutionID)
}
