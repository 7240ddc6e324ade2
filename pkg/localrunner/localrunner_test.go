package localrunner_test

import (
	"path/filepath"
	"testing"

	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamostoretest"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/runnertest"
)

func TestContract(t *testing.T) {
	runnertest.Run(t, func(t *testing.T) runnertest.Harness {
		store := boltStore(t, "cardflow.db")
		return harness(t, store, store)
	})
}

// TestContractOnDynamoDB runs the engine and the local runner on the
// DynamoDB store (`CARDFLOW_STORE=dynamodb make run`).
func TestContractOnDynamoDB(t *testing.T) {
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
