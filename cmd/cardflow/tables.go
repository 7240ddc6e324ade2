package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
)

const tablesAbout = `Manages the DynamoDB tables of the store.

  create   create the tables that do not exist yet
`

const tablesCreateAbout = `Creates the DynamoDB tables of the store that do not exist yet and waits until
they are ACTIVE; existing tables are left as they are. Without an endpoint the
tables are created in AWS with the credentials and region of the environment.
`

// tables manages the DynamoDB tables.
func tables(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if _, err := group("tables", tablesAbout, []string{"create"}, args, stdout, stderr); err != nil {
		return err
	}
	c := newCommand("tables create", "", tablesCreateAbout, stdout)
	endpoint := c.String("endpoint", os.Getenv("DYNAMODB_ENDPOINT"), "DynamoDB endpoint, e.g. DynamoDB Local's http://localhost:8000; empty for AWS; env DYNAMODB_ENDPOINT")
	prefix := c.String("prefix", envOr("CARDFLOW_TABLE_PREFIX", dynamostore.DefaultPrefix), "table name prefix; env CARDFLOW_TABLE_PREFIX")
	region := c.String("region", "", "AWS region (default: the environment's, us-east-1 with an endpoint)")
	if _, err := c.parse(args[1:], 0); err != nil {
		return err
	}
	client, err := dynamoclient.New(ctx, *endpoint, *region)
	if err != nil {
		return err
	}
	created, err := dynamostore.CreateTables(ctx, client, *prefix)
	if err != nil {
		return err
	}
	for _, t := range dynamostore.Tables(*prefix) {
		state := "exists"
		if slices.Contains(created, *t.Input.TableName) {
			state = "created"
		}
		fmt.Fprintf(stdout, "%s\t%s\n", *t.Input.TableName, state)
	}
	return nil
}
