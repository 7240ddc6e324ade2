// Command cardflow-samevents prepares `sam local invoke`: it creates the
// tables missing at a DynamoDB endpoint, loads sample records into them and
// writes one sample event per function, naming those records.
//
//	go run ./cmd/cardflow-samevents [--endpoint URL] [--prefix cardflow-dev-] [--dir events]
//
// It is a command of its own, not one of the cardflow CLI's, because seeding
// runs the engine and the Lambda wiring, which the CLI does not link.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cardflow/cardflow/cmd/cardflow-samevents/internal/samlocal"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
)

const usage = `usage:
  cardflow-samevents [--endpoint URL] [--prefix cardflow-dev-] [--dir events]

Prepares ` + "`sam local invoke`" + `: creates the tables missing at the DynamoDB
endpoint (default $DYNAMODB_ENDPOINT, else http://localhost:8000), loads
sample records into them and writes one sample event per function to the
directory, naming those records. --prefix defaults to $CARDFLOW_TABLE_PREFIX,
else cardflow-dev- (what env.local.json sets).
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run returns the exit status: 0, 1 when seeding failed, 2 on a usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cardflow-samevents", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	endpoint := fs.String("endpoint", envOr("DYNAMODB_ENDPOINT", "http://localhost:8000"), "DynamoDB Local endpoint")
	prefix := fs.String("prefix", envOr("CARDFLOW_TABLE_PREFIX", dynamostore.DefaultPrefix), "table name prefix")
	dir := fs.String("dir", "events", "directory of the sample events")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "cardflow-samevents: takes no arguments, got %q\n", fs.Args())
		fs.Usage()
		return 2
	}
	if *endpoint == "" {
		fmt.Fprintln(stderr, "cardflow-samevents: writes sample records and needs DynamoDB Local: give --endpoint")
		return 2
	}
	if err := samEvents(ctx, *endpoint, *prefix, *dir, stdout); err != nil {
		fmt.Fprintf(stderr, "cardflow-samevents: %v\n", err)
		return 1
	}
	return 0
}

// samEvents seeds DynamoDB Local and writes the sample events.
func samEvents(ctx context.Context, endpoint, prefix, dir string, stdout io.Writer) error {
	client, err := dynamoclient.New(ctx, endpoint, "")
	if err != nil {
		return err
	}
	if _, err := dynamostore.CreateTables(ctx, client, prefix); err != nil {
		return fmt.Errorf("DynamoDB at %s (is DynamoDB Local running? `make dynamodb-local` starts one): %w", endpoint, err)
	}
	store, err := dynamostore.New(client, dynamostore.WithTablePrefix(prefix))
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
	if err := samlocal.WriteEvents(dir, evs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Sample records in %s* at %s; %d events in %s/.\n", prefix, endpoint, len(evs), dir)
	return nil
}

// envOr returns the environment variable name, or def when it is unset.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
