package dynamostore_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
)

// TestCreateTablesAddsIndexes: an executions table made before the
// search indexes gets them from CreateTables, and its records stay.
func TestCreateTablesAddsIndexes(t *testing.T) {
	tables(t) // the shared client
	ctx := t.Context()
	prefix := "cardflow-test-" + strings.ToLower(cardflow.NewID(time.Now())) + "-"
	var old *dynamodb.CreateTableInput
	for _, def := range dynamostore.Tables(prefix) {
		if strings.HasSuffix(*def.Input.TableName, dynamostore.TableExecutions) {
			old = def.Input
		}
	}
	// The table as it was: without the search indexes and their keys.
	before := *old
	before.GlobalSecondaryIndexes = slices.DeleteFunc(slices.Clone(old.GlobalSecondaryIndexes), func(g types.GlobalSecondaryIndex) bool {
		return strings.HasPrefix(*g.IndexName, "search_")
	})
	before.AttributeDefinitions = slices.DeleteFunc(slices.Clone(old.AttributeDefinitions), func(d types.AttributeDefinition) bool {
		return strings.HasPrefix(*d.AttributeName, "search_") || *d.AttributeName == "created_key"
	})
	if _, err := shared.client.CreateTable(ctx, &before); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, def := range dynamostore.Tables(prefix) {
			shared.client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: def.Input.TableName})
		}
	})
	created, err := dynamostore.CreateTables(ctx, shared.client, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(created, *old.TableName) {
		t.Errorf("CreateTables created %s again", *old.TableName)
	}
	out, err := shared.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: old.TableName})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range out.Table.GlobalSecondaryIndexes {
		got = append(got, *g.IndexName)
	}
	for _, g := range old.GlobalSecondaryIndexes {
		if !slices.Contains(got, *g.IndexName) {
			t.Errorf("after CreateTables the executions table has indexes %v, want %s among them", got, *g.IndexName)
		}
	}
}
