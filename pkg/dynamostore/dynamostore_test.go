package dynamostore_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/cardflow/cardflow/internal/storetest"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
)

// The tests of this package that need DynamoDB run against DYNAMODB_ENDPOINT
// (DynamoDB Local, which `make test` starts) in tables of their own: each run
// of the test binary creates them under a fresh prefix and deletes them at
// the end, so runs never collide.
var shared struct {
	once   sync.Once
	client *dynamodb.Client
	prefix string
	err    error
}

func TestMain(m *testing.M) {
	code := testenv.Run(m)
	if shared.client != nil && shared.err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		for _, t := range dynamostore.Tables(shared.prefix) {
			if _, err := shared.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: t.Input.TableName}); err != nil {
				fmt.Fprintf(os.Stderr, "delete table %s: %v\n", *t.Input.TableName, err)
			}
		}
		cancel()
	}
	os.Exit(code)
}

// endpoint returns DynamoDB Local's address (testenv.DynamoDB).
func endpoint(tb testing.TB) string {
	tb.Helper()
	return testenv.DynamoDB(tb)
}

// tables creates this run's tables once and returns their prefix.
func tables(tb testing.TB) string {
	tb.Helper()
	ep := endpoint(tb)
	shared.once.Do(func() {
		ctx := context.Background()
		shared.prefix = "cardflow-test-" + strings.ToLower(cardflow.NewID(time.Now())) + "-"
		if shared.client, shared.err = dynamoclient.New(ctx, ep, ""); shared.err != nil {
			return
		}
		_, shared.err = dynamostore.CreateTables(ctx, shared.client, shared.prefix)
	})
	if shared.err != nil {
		tb.Fatalf("DynamoDB at %s: %v", ep, shared.err)
	}
	return shared.prefix
}

// newStore returns a store on this run's tables. Options of the client, such
// as a request counter, give the store a client of its own.
func newStore(tb testing.TB, clientOpts ...func(*dynamodb.Options)) *dynamostore.Store {
	tb.Helper()
	prefix := tables(tb)
	client := shared.client
	if len(clientOpts) > 0 {
		var err error
		if client, err = dynamoclient.New(tb.Context(), endpoint(tb), "", clientOpts...); err != nil {
			tb.Fatal(err)
		}
	}
	s, err := dynamostore.New(client, dynamostore.WithTablePrefix(prefix))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) {
	tables(t)
	storetest.Run(t, func(t *testing.T) cardflow.Store { return newStore(t) })
}

func TestCreateTablesTwice(t *testing.T) {
	prefix := tables(t)
	created, err := dynamostore.CreateTables(t.Context(), shared.client, prefix)
	if err != nil {
		t.Fatalf("CreateTables again: %v", err)
	}
	if len(created) != 0 {
		t.Errorf("CreateTables again: got %v created, want none", created)
	}
	for _, def := range dynamostore.Tables(prefix) {
		out, err := shared.client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: def.Input.TableName})
		if err != nil {
			t.Fatalf("DescribeTable %s: %v", *def.Input.TableName, err)
		}
		tbl := out.Table
		if got, want := string(tbl.TableStatus), "ACTIVE"; got != want {
			t.Errorf("%s: got status %s, want %s", *tbl.TableName, got, want)
		}
		if got, want := len(tbl.GlobalSecondaryIndexes), len(def.Input.GlobalSecondaryIndexes); got != want {
			t.Errorf("%s: got %d global indexes, want %d", *tbl.TableName, got, want)
		}
		if got, want := len(tbl.LocalSecondaryIndexes), len(def.Input.LocalSecondaryIndexes); got != want {
			t.Errorf("%s: got %d local indexes, want %d", *tbl.TableName, got, want)
		}
		if def.TTLAttribute == "" {
			continue
		}
		ttl, err := shared.client.DescribeTimeToLive(t.Context(), &dynamodb.DescribeTimeToLiveInput{TableName: def.Input.TableName})
		if err != nil {
			t.Fatalf("DescribeTimeToLive %s: %v", *def.Input.TableName, err)
		}
		if d := ttl.TimeToLiveDescription; d == nil || aws.ToString(d.AttributeName) != def.TTLAttribute || d.TimeToLiveStatus != "ENABLED" {
			t.Errorf("%s: got TTL %+v, want %s enabled", *tbl.TableName, d, def.TTLAttribute)
		}
	}
}
