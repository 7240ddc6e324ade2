package localrunner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/runnertest"
)

func TestContract(t *testing.T) {
	runnertest.Run(t, func(t *testing.T) runnertest.Harness {
		store := openBolt(t, "cardflow.db")
		return harness(t, store, store)
	})
}

// TestContractOnDynamoDB runs the engine and the local runner on the
// DynamoDB store (`CARDFLOW_STORE=dynamodb make run`).
func TestContractOnDynamoDB(t *testing.T) {
	ep := os.Getenv("DYNAMODB_ENDPOINT")
	if ep == "" {
		const why = "DYNAMODB_ENDPOINT is not set: run `make test`, which starts DynamoDB Local"
		if os.Getenv("CARDFLOW_STRICT_TESTS") == "1" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	ctx := context.Background()
	client, err := dynamostore.NewClient(ctx, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	prefix := "cardflow-runner-" + strings.ToLower(cardflow.NewID(time.Now())) + "-"
	if _, err := dynamostore.CreateTables(ctx, client, prefix); err != nil {
		t.Fatal(err)
	}
	runnertest.Run(t, func(t *testing.T) runnertest.Harness {
		store, err := dynamostore.New(client, dynamostore.WithTablePrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
		return harness(t, store, openBolt(t, "outbox.db"))
	})
}

func openBolt(t *testing.T, name string) *boltstore.Store {
	t.Helper()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	return store
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
