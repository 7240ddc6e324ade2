package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/cardflow/cardflow/cmd/cardflow/internal/samlocal"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
)

const samEventsUsage = `usage:
  cardflow sam-events [--endpoint URL] [--prefix cardflow-dev-] [--dir events]

Prepares ` + "`sam local invoke`" + `: creates the tables missing at the DynamoDB
endpoint (default $DYNAMODB_ENDPOINT, else http://localhost:8000), loads
sample records into them and writes one sample event per function to the
directory, naming those records. --prefix defaults to $CARDFLOW_TABLE_PREFIX,
else cardflow-dev- (what env.local.json sets).
`

// samEvents seeds DynamoDB Local and writes the sample events.
func samEvents(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sam-events", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, samEventsUsage) }
	endpoint := fs.String("endpoint", envOr("DYNAMODB_ENDPOINT", "http://localhost:8000"), "DynamoDB Local endpoint")
	prefix := fs.String("prefix", envOr("CARDFLOW_TABLE_PREFIX", dynamostore.DefaultPrefix), "table name prefix")
	dir := fs.String("dir", "events", "directory of the sample events")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("sam-events takes no arguments, got %q", fs.Args())
	}
	if *endpoint == "" {
		return fmt.Errorf("sam-events writes sample records and needs DynamoDB Local: give --endpoint")
	}
	client, err := dynamoclient.New(ctx, *endpoint, "")
	if err != nil {
		return err
	}
	if _, err := dynamostore.CreateTables(ctx, client, *prefix); err != nil {
		return fmt.Errorf("DynamoDB at %s (is DynamoDB Local running? `make dynamodb-local` starts one): %w", *endpoint, err)
	}
	store, err := dynamostore.New(client, dynamostore.WithTablePrefix(*prefix))
	if err != nil {
		return err
	}
	f, err := samlocal.Seed(ctx, store, time.Now())
	if err != nil {
		return err
	}
	evs, err := samlocal.Events(f)
	if err != nil {
		return err
	}
	if err := samlocal.WriteEvents(*dir, evs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Sample records in %s* at %s; %d events in %s/.\n", *prefix, *endpoint, len(evs), *dir)
	return nil
}
