// Package dynamostoretest gives the tests of other packages DynamoDB stores
// (pkg/dynamostore) on tables of their own in DynamoDB Local, the way they
// hand stores to the contract suites.
package dynamostoretest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
)

// Tables creates the tables under a prefix of their own at
// $DYNAMODB_ENDPOINT and returns what opens a store over them, and the
// prefix (for other processes). Without the endpoint it skips the test
// (testenv.DynamoDB).
func Tables(tb testing.TB) (open func(tb testing.TB) *dynamostore.Store, prefix string) {
	tb.Helper()
	ep := testenv.DynamoDB(tb)
	ctx := context.Background()
	client, err := dynamoclient.New(ctx, ep, "")
	if err != nil {
		tb.Fatal(err)
	}
	prefix = "cardflow-test-" + strings.ToLower(cardflow.NewID(time.Now())) + "-"
	if _, err := dynamostore.CreateTables(ctx, client, prefix); err != nil {
		tb.Fatalf("DynamoDB at %s: %v", ep, err)
	}
	return func(tb testing.TB) *dynamostore.Store {
		store, err := dynamostore.New(client, dynamostore.WithTablePrefix(prefix))
		if err != nil {
			tb.Fatal(err)
		}
		return store
	}, prefix
}

// shared opens stores on the tables Open creates once per test binary.
var shared struct {
	mu   sync.Mutex
	open func(tb testing.TB) *dynamostore.Store
}

// Open returns a store on tables this test binary shares, which its first
// call creates (Tables): the tests that run something on each store (the
// engine's, local mode's) give each test an organization of its own
// rather than tables of its own. Without the endpoint it skips the test,
// or fails it under CARDFLOW_STRICT_TESTS=1.
func Open(tb testing.TB) *dynamostore.Store {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.open == nil {
		shared.open, _ = Tables(tb)
	}
	return shared.open(tb)
}
