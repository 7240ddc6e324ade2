// Package dynamostoretest gives the tests of other packages DynamoDB stores
// (pkg/dynamostore) on tables of their own in DynamoDB Local, the way they
// hand stores to the contract suites.
package dynamostoretest

import (
	"context"
	"strings"
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
