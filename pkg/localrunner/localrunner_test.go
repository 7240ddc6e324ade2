package localrunner_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/internal/runnertest"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/localrunner"
)

func TestContract(t *testing.T) {
	t.Parallel()
	runnertest.Run(t, func(t *testing.T) runnertest.Harness {
		store := boltStore(t, "cardflow.db")
		return harness(t, store, store)
	})
}

// TestContractOnDynamoDB runs the engine and the local runner on the
// DynamoDB store (`CARDFLOW_STORE=dynamodb make run`).
func TestContractOnDynamoDB(t *testing.T) {
	t.Parallel()
	open, _ := dynamostoretest.Tables(t)
	runnertest.Run(t, func(t *testing.T) runnertest.Harness {
		return harness(t, open(t), boltStore(t, "outbox.db"))
	})
}

func harness(t *testing.T, store cardflow.Store, outbox *boltstore.Store) runnertest.Harness {
	t.Helper()
	st, err := localmode.NewStack(store, outbox, localmode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return runnertest.Harness{Service: st.Service, Store: store}
}

// boltStore opens an embedded store file in the test's temporary
// directory; the stack it is handed to closes it.
func boltStore(t *testing.T, name string) *boltstore.Store {
	t.Helper()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// countingAdvancer counts the Advance calls of each execution.
type countingAdvancer struct {
	eng   localrunner.Advancer
	mu    sync.Mutex
	calls map[string]int
}

func (c *countingAdvancer) Advance(ctx context.Context, ref cardflow.ExecutionRef) (engine.Result, error) {
	c.mu.Lock()
	c.calls[ref.ExecutionID]++
	c.mu.Unlock()
	return c.eng.Advance(ctx, ref)
}

func (c *countingAdvancer) count(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[id]
}

// logBuffer collects log lines from several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestRecoverEndsUnreadableExecutions starts a runner on a store file
// holding two open executions it cannot read, as a restart finds them: one
// whose input nests 10,000 levels deep, as triggers stored it before
// bodies were limited, which ends FAILED, and one whose record is damaged
// beyond that, which nothing can be written for and which the runner
// drops. Each is advanced once and never retried. Both records are written
// into the file as bytes: the store no longer encodes such an input.
func TestRecoverEndsUnreadableExecutions(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cardflow.db")
	store, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	start := func(input map[string]any) *cardflow.Execution {
		t.Helper()
		ex := &cardflow.Execution{WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: "wf-1", WorkflowVersion: 1,
			OrganizationID: "acme", Status: cardflow.ExecRunning, WorkflowInputPayload: input,
			State: cardflow.ExecutionState{StepID: "start"}}
		ex.State.ProcessID = ex.WorkflowExecutionID
		p := &cardflow.Process{OrganizationID: "acme", ProcessID: ex.WorkflowExecutionID, WorkflowID: "wf-1", ExecutionID: ex.WorkflowExecutionID}
		if err := store.StartExecution(t.Context(), ex, p, nil); err != nil {
			t.Fatal(err)
		}
		return ex
	}
	tooDeep, damaged := start(map[string]any{"items": "deep"}), start(map[string]any{})
	store.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		parts := tx.Bucket([]byte("execution_starts"))
		key := []byte("acme\x00wf-1\x00" + tooDeep.WorkflowExecutionID + "\x00input")
		placeholder := []byte(`"items":"deep"`)
		input := parts.Get(key)
		if !bytes.Contains(input, placeholder) {
			return fmt.Errorf("no input %s in the stored execution's input %s", placeholder, input)
		}
		deep := `"items":` + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000)
		if err := parts.Put(key, bytes.Replace(input, placeholder, []byte(deep), 1)); err != nil {
			return err
		}
		return tx.Bucket([]byte("executions")).Put([]byte("acme\x00wf-1\x00"+damaged.WorkflowExecutionID), []byte("not JSON"))
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	store, err = boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	env, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(store, store, env)
	if err != nil {
		t.Fatal(err)
	}
	adv := &countingAdvancer{eng: eng, calls: map[string]int{}}
	var logs logBuffer
	runner, err := localrunner.New(adv, store, localrunner.WithRetryDelay(time.Millisecond),
		localrunner.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	if n, err := runner.Recover(t.Context()); err != nil || n != 2 {
		t.Fatalf("recover: got %d, %v, want 2 open executions", n, err)
	}

	dropped := "nor could the execution be marked FAILED"
	testenv.WaitFor(t, "the first execution FAILED and the second dropped", func() bool {
		ex, err := store.GetExecution(t.Context(), "acme", "wf-1", tooDeep.WorkflowExecutionID)
		return err == nil && ex.Status == cardflow.ExecFailed && strings.Contains(logs.String(), dropped)
	})
	// With a retry delay of a millisecond, a loop would show by now.
	time.Sleep(200 * time.Millisecond)
	for _, id := range []string{tooDeep.WorkflowExecutionID, damaged.WorkflowExecutionID} {
		if got := adv.count(id); got != 1 {
			t.Errorf("execution %s: advanced %d times, want once", id, got)
		}
	}
	if got := strings.Count(logs.String(), dropped); got != 1 {
		t.Errorf("the dropped execution was logged %d times, want once:\n%s", got, logs.String())
	}
	if strings.Contains(logs.String(), "not JSON") {
		t.Errorf("the log holds the record's content:\n%s", logs.String())
	}
}

// blockingAdvancer's first Advance runs until its context ends, as a step
// evaluating a long expression does; the next finds the execution ended.
type blockingAdvancer struct {
	entered, cancelled chan struct{}
	mu                 sync.Mutex
	calls              int
}

func (b *blockingAdvancer) Advance(ctx context.Context, _ cardflow.ExecutionRef) (engine.Result, error) {
	b.mu.Lock()
	b.calls++
	first := b.calls == 1
	b.mu.Unlock()
	if !first {
		return engine.Result{Status: cardflow.ExecCancelled}, nil
	}
	close(b.entered)
	<-ctx.Done()
	close(b.cancelled)
	return engine.Result{Status: cardflow.ExecRunning}, ctx.Err()
}

// Stop reaches an Advance call that is running: its context is cancelled,
// so that a cancelled execution's step stops, and the runner advances once
// more, finds the execution ended, and lets it go.
func TestStopCancelsTheRunningAdvance(t *testing.T) {
	t.Parallel()
	eng := &blockingAdvancer{entered: make(chan struct{}), cancelled: make(chan struct{})}
	r, err := localrunner.New(eng, boltStore(t, "stop.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ref := cardflow.ExecutionRef{OrganizationID: "acme", WorkflowID: "wf-1", ExecutionID: "ex-1"}
	if err := r.Start(t.Context(), ref); err != nil {
		t.Fatal(err)
	}
	<-eng.entered
	if err := r.Stop(t.Context(), ref); err != nil {
		t.Fatal(err)
	}
	select {
	case <-eng.cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("Stop left the running Advance running")
	}
}
