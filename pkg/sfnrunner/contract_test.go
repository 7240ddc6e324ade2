package sfnrunner_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/internal/fakes/sfnfake"
	"github.com/cardflow/cardflow/internal/runnertest"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/localscheduler"
	"github.com/cardflow/cardflow/pkg/sfnrunner"
)

func TestContract(t *testing.T) {
	runnertest.Run(t, func(t *testing.T) runnertest.Harness {
		store := boltStore(t, "cardflow.db")
		return newStack(t, store, store).harness
	})
}

func TestContractOnDynamoDB(t *testing.T) {
	open, _ := dynamostoretest.Tables(t)
	runnertest.Run(t, func(t *testing.T) runnertest.Harness {
		return newStack(t, open(t), boltStore(t, "outbox.db")).harness
	})
}

// boltStore opens an embedded store file in the test's temporary
// directory; whoever the test hands it to closes it.
func boltStore(tb testing.TB, name string) *boltstore.Store {
	tb.Helper()
	store, err := boltstore.Open(filepath.Join(tb.TempDir(), name))
	if err != nil {
		tb.Fatal(err)
	}
	return store
}

// Function ARNs the definition's substitutions name.
const (
	advanceARN = "arn:aws:lambda:us-east-1:123456789012:function:cardflow-advance"
	parkARN    = "arn:aws:lambda:us-east-1:123456789012:function:cardflow-park"
)

// stack is the service with its executions on the fake Step Functions,
// which runs statemachine/runner.asl.json with the real handlers.
type stack struct {
	harness  runnertest.Harness
	fake     *sfnfake.Server
	client   *sfn.Client
	handlers *sfnrunner.Handlers
	runner   *sfnrunner.Runner
	// billed sums the Lambda handlers' durations, each rounded up to the
	// millisecond as Lambda bills them.
	billed atomic.Int64
	// failAdvance makes that many Advance invocations fail, as they would
	// with the store out of reach (those that give up excepted).
	failAdvance atomic.Int32
}

func definition(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "statemachine", "runner.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lambda adapts a handler to a fake Lambda function, decoding and encoding
// JSON as the Lambda runtime does.
func lambda[In, Out any](h func(context.Context, In) (Out, error)) sfnfake.Func {
	return timed(nil, h)
}

// timed is lambda, adding each invocation's billed milliseconds to billed
// when it is not nil.
func timed[In, Out any](billed *atomic.Int64, h func(context.Context, In) (Out, error)) sfnfake.Func {
	return func(ctx context.Context, payload []byte) ([]byte, error) {
		if billed != nil {
			defer bill(billed, time.Now())
		}
		var in In
		if err := json.Unmarshal(payload, &in); err != nil {
			return nil, err
		}
		out, err := h(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

// newStack builds the stack; opts adjust the fake's configuration.
func newStack(t testing.TB, store cardflow.Store, outbox *boltstore.Store, opts ...func(*sfnfake.Config)) *stack {
	t.Helper()
	eng, err := localmode.NewEngine(store, outbox, localmode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var h *sfnrunner.Handlers
	st := &stack{}
	cfg := sfnfake.Config{
		Definition:    definition(t),
		Substitutions: map[string]string{"AdvanceFunctionArn": advanceARN, "ParkFunctionArn": parkARN},
		Functions: map[string]sfnfake.Func{
			advanceARN: timed(&st.billed, func(ctx context.Context, in sfnrunner.AdvanceInput) (sfnrunner.AdvanceOutput, error) {
				if in.GiveUp == nil && st.failAdvance.Add(-1) >= 0 {
					return sfnrunner.AdvanceOutput{}, cardflow.Errorf(cardflow.EUNAVAILABLE, "the store cannot be reached")
				}
				return h.Advance(ctx, in)
			}),
			parkARN: timed(&st.billed, func(ctx context.Context, in sfnrunner.ParkInput) (any, error) {
				return nil, h.Park(ctx, in)
			}),
		},
	}
	for _, o := range opts {
		o(&cfg)
	}
	fake, err := sfnfake.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fake.Close()
		if cardflow.Store(outbox) != store {
			outbox.Close()
		}
		store.Close()
	})
	client := sfn.NewFromConfig(aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	}, func(o *sfn.Options) { o.BaseEndpoint = aws.String(fake.URL) })
	if h, err = sfnrunner.NewHandlers(eng, store, client); err != nil {
		t.Fatal(err)
	}
	runner, err := sfnrunner.New(client, fake.StateMachineARN)
	if err != nil {
		t.Fatal(err)
	}
	// Schedules are recorded, never fired: the scheduler is not started.
	var svc *app.Service
	sched, err := localscheduler.New(func(ctx context.Context, sc *cardflow.Schedule, at time.Time) error {
		_, err := svc.StartScheduled(ctx, sc, at)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if svc, err = app.New(store, app.Deps{Checker: eng, CardChecker: cards.Checker{}, Runner: runner, Scheduler: sched},
		// No default limits: an organization's own hold.
		app.WithLimits(cardflow.Limits{}, nil)); err != nil {
		t.Fatal(err)
	}
	st.harness = runnertest.Harness{Service: svc, Store: store}
	st.fake, st.client, st.handlers, st.runner = fake, client, h, runner
	return st
}

// bill adds the milliseconds since start, rounded up, to billed.
func bill(billed *atomic.Int64, start time.Time) {
	billed.Add((time.Since(start).Nanoseconds() + 999_999) / 1_000_000)
}
