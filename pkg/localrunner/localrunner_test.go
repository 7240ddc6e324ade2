package localrunner_test

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/runnertest"
)

func TestContract(t *testing.T) {
	runnertest.Run(t, func(t *testing.T) runnertest.Harness {
		store := runnertest.BoltStore(t, "cardflow.db")
		return harness(t, store, store)
	})
}

// TestContractOnDynamoDB runs the engine and the local runner on the
// DynamoDB store (`CARDFLOW_STORE=dynamodb make run`).
func TestContractOnDynamoDB(t *testing.T) {
	open, _ := runnertest.DynamoDB(t)
	runnertest.Run(t, func(t *testing.T) runnertest.Harness {
		return harness(t, open(t), runnertest.BoltStore(t, "outbox.db"))
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
