package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// addMissingIndexes adds to an existing table the global indexes its
// definition has and it lacks (the search indexes, for tables made before
// them), one at a time: DynamoDB creates one index per UpdateTable, and
// takes the next only once the table is ACTIVE again. It returns the
// names of the indexes it added.
func addMissingIndexes(ctx context.Context, client TablesClient, t Table) ([]string, error) {
	name := *t.Input.TableName
	var added []string
	for _, want := range t.Input.GlobalSecondaryIndexes {
		desc, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: t.Input.TableName})
		if err != nil {
			return added, fmt.Errorf("describe table %s: %w", name, err)
		}
		has := false
		for _, g := range desc.Table.GlobalSecondaryIndexes {
			has = has || *g.IndexName == *want.IndexName
		}
		if has {
			continue
		}
		create := &types.CreateGlobalSecondaryIndexAction{IndexName: want.IndexName, KeySchema: want.KeySchema, Projection: want.Projection}
		_, err = client.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName: t.Input.TableName, AttributeDefinitions: t.Input.AttributeDefinitions,
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: create}},
		})
		if err != nil {
			return added, fmt.Errorf("add index %s to table %s: %w", *want.IndexName, name, err)
		}
		if err := waitIndexActive(ctx, client, name, *want.IndexName); err != nil {
			return added, err
		}
		added = append(added, *want.IndexName)
	}
	return added, nil
}

// waitIndexActive waits until the table and its index are ACTIVE (the
// index backfilled), for at most 30 minutes.
func waitIndexActive(ctx context.Context, client TablesClient, table, index string) error {
	deadline := time.Now().Add(30 * time.Minute)
	for wait := 200 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		desc, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", table, err)
		}
		if desc.Table.TableStatus == types.TableStatusActive {
			for _, g := range desc.Table.GlobalSecondaryIndexes {
				if *g.IndexName == index && g.IndexStatus == types.IndexStatusActive {
					return nil
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("index %s of table %s is not ACTIVE after 30 minutes", index, table)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}
