// Command cardflow runs the service locally and manages it.
//
//	cardflow serve                      run the service with the embedded store
//	cardflow keys create --org ORG --workspace WS --scopes read,execute,admin [--name NAME]
//	cardflow keys list [--org ORG]
//	cardflow keys revoke KEY_ID
//	cardflow tables create --endpoint URL
//	cardflow sam-events                 seed DynamoDB Local, write events/ for sam local invoke
//	cardflow secrets path --org ORG NAME where an organization's secret is set
//	cardflow trigger WORKFLOW_ID [--version N] [--process-id P] [--data JSON]
//	cardflow resume PROCESS_ID [--data JSON]
//	cardflow executions [--workflow ID]
//	cardflow watch WORKFLOW_ID EXECUTION_ID
//	cardflow outbox
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage:
  cardflow serve [--addr :3000] [--data-dir .cardflow] [--early-resume 10m] [--pprof 127.0.0.1:6060]
  cardflow keys create --org ORG --workspace WS --scopes read,execute,admin [--name NAME] [--data-dir DIR]
  cardflow keys list [--org ORG] [--data-dir DIR]
  cardflow keys revoke KEY_ID [--data-dir DIR]
  cardflow tables create --endpoint URL [--prefix cardflow-dev-] [--region R]
  cardflow sam-events [--endpoint URL] [--prefix cardflow-dev-] [--dir events]
  cardflow secrets path (--org ORG | --deployment) [--as env|file|secretsmanager] NAME
  cardflow secrets set (--org ORG | --deployment) [--dir DIR] NAME < value

Against a running service (--url, default http://localhost:$PORT; --key, default
$CARDFLOW_API_KEY or the demo key in the data directory):
  cardflow trigger WORKFLOW_ID [--version N] [--process-id P] [--idempotency-key K] [--data JSON|@file]
  cardflow resume PROCESS_ID [--data JSON|@file]
  cardflow executions [--workflow ID] [--limit N]
  cardflow watch WORKFLOW_ID EXECUTION_ID
  cardflow outbox [--limit N]

Environment: PORT (default 3000), CARDFLOW_DATA_DIR (default .cardflow),
CARDFLOW_URL, CARDFLOW_API_KEY.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cardflow:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "keys":
		return keys(ctx, args[1:], stdout, stderr)
	case "trigger":
		return trigger(ctx, args[1:], stdout, stderr)
	case "resume":
		return resume(ctx, args[1:], stdout, stderr)
	case "executions":
		return executions(ctx, args[1:], stdout, stderr)
	case "watch":
		return watch(ctx, args[1:], stdout, stderr)
	case "outbox":
		return outbox(ctx, args[1:], stdout, stderr)
	case "tables":
		return tables(ctx, args[1:], stdout, stderr)
	case "sam-events":
		return samEvents(ctx, args[1:], stdout, stderr)
	case "secrets":
		return secretsCommand(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// envOr returns the environment variable name, or def when it is unset.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func newFlags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", envOr("CARDFLOW_DATA_DIR", ".cardflow"), "data directory of the local store")
	return fs, dataDir
}

func newLogger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if os.Getenv("LOG_LEVEL") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
