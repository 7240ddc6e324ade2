package runnertest

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
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
)

// BoltStore opens an embedded store file in the test's temporary
// directory. Whoever the test hands it to closes it.
func BoltStore(t testing.TB, name string) *boltstore.Store {
	t.Helper()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// DynamoDB creates the tables under a prefix of their own at
// $DYNAMODB_ENDPOINT and returns what opens a store over them, and the
// prefix (for other processes). Without the endpoint it skips the test, or
// fails it under CARDFLOW_STRICT_TESTS=1.
func DynamoDB(t testing.TB) (open func(t testing.TB) *dynamostore.Store, prefix string) {
	t.Helper()
	ep := os.Getenv("DYNAMODB_ENDPOINT")
	if ep == "" {
		const why = "DYNAMODB_ENDPOINT is not set: run `make test`, which starts DynamoDB Local"
		if os.Getenv("CARDFLOW_STRICT_TESTS") == "1" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	ctx := context.Background()
	client, err := dynamoclient.New(ctx, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	prefix = "cardflow-runner-" + strings.ToLower(cardflow.NewID(time.Now())) + "-"
	if _, err := dynamostore.CreateTables(ctx, client, prefix); err != nil {
		t.Fatal(err)
	}
	return func(t testing.TB) *dynamostore.Store {
		store, err := dynamostore.New(client, dynamostore.WithTablePrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
		return store
	}, prefix
}
