package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
)

const tablesUsage = `usage:
  cardflow tables create [--endpoint URL] [--prefix P] [--region R]

Creates the DynamoDB tables of the store that do not exist yet and waits until
they are ACTIVE; existing tables are left as they are. --endpoint defaults to
$DYNAMODB_ENDPOINT (DynamoDB Local, e.g. http://localhost:8000); without one
the tables are created in AWS with the credentials and region of the
environment. --prefix defaults to $CARDFLOW_TABLE_PREFIX, else cardflow-dev-.
`

// tables manages the DynamoDB tables.
func tables(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprint(stderr, tablesUsage)
		return flag.ErrHelp
	}
	fs := flag.NewFlagSet("tables create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, tablesUsage) }
	endpoint := fs.String("endpoint", os.Getenv("DYNAMODB_ENDPOINT"), "DynamoDB endpoint; empty for AWS")
	prefix := fs.String("prefix", envOr("CARDFLOW_TABLE_PREFIX", dynamostore.DefaultPrefix), "table name prefix")
	region := fs.String("region", "", "AWS region (default: the environment's, us-east-1 with an endpoint)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("tables create takes no arguments, got %q", fs.Args())
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
