// Command cardflow runs the service locally and manages it.
//
//	cardflow serve                      run the service with the embedded store
//	cardflow keys create --org ORG --workspace WS --scopes read,execute,admin [--name NAME]
//	cardflow keys list [--org ORG]
//	cardflow keys revoke KEY_ID
//	cardflow webhooks add --org ORG URL | list [--org ORG] | remove WEBHOOK_ID | rotate WEBHOOK_ID
//	cardflow tables create --endpoint URL
//	cardflow secrets path --org ORG NAME where an organization's secret is set
//	cardflow trigger WORKFLOW_ID [--version N] [--process-id P] [--data JSON]
//	cardflow resume PROCESS_ID [--data JSON]
//	cardflow executions [--workflow ID] [--status S] [--process-id P] [--trigger-type T] [--created-after T] [--created-before T]
//	cardflow watch WORKFLOW_ID EXECUTION_ID
//	cardflow redrive WORKFLOW_ID EXECUTION_ID
//	cardflow outbox
//	cardflow links APPROVAL_ID --approver PERSON
//	cardflow override APPROVAL_ID --decision approve|reject --reason TEXT
//	cardflow apply -f PATH [-f PATH...] [--publish] [--dry-run]
//	cardflow export --dir DIR
//	cardflow approvals list|show APPROVAL_ID|answer APPROVAL_ID --decision approve|reject [--comment TEXT]
//	cardflow workflows list|show WORKFLOW_ID [--version N]|publish WORKFLOW_ID VERSION
//	cardflow cards list|show CARD_ID [--version N]|publish CARD_ID VERSION
//
// `cardflow help COMMAND` and `cardflow COMMAND --help` describe a command.
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
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

const overview = `cardflow runs the cardflow service on this machine and talks to it.

usage: cardflow COMMAND [ARGUMENTS] [FLAGS]

The local service:
  serve        run the service with the embedded store (what ` + "`make run`" + ` does)
  keys         create, list and revoke API keys (keys create, keys list, keys revoke)
  webhooks     add, list and remove the webhooks that receive events, rotate their secrets (webhooks add, list, remove, rotate)
  limits       an organization's own request rate and cap on open executions (limits show, set, clear)
  tables       create the DynamoDB tables (tables create)
  secrets      where an organization's or the deployment's secret is set (secrets path, secrets set)
  schema       the JSON Schema of a workflow or card as a file, for editors

Against a running service:
  trigger      start an execution of a workflow
  resume       answer the execution waiting on a process id
  executions   list executions
  watch        follow an execution's steps until it ends
  redrive      continue a failed execution from the step that failed
  outbox       list the cards card steps sent
  links        an approver's personal links to an approval's card (admin key; recorded)
  override     decide an approval without its approvers, with a reason (admin key; recorded)
  teams        the organization's Teams conversations (teams conversations add, list, remove)
  apply        save cards and workflows from YAML or JSON files (apply -f PATH [--publish] [--dry-run])
  export       write every card and workflow of the organization as files for apply
  approvals    the open approvals; answer one as the key's person (approvals list, show, answer)
  workflows    the organization's workflows (workflows list, show, publish)
  cards        the organization's cards (cards list, show, publish)
  delegations  hand a person's approvals to a delegate for a period (delegations set, list, remove)

  help COMMAND, COMMAND --help   what a command does, its arguments and flags
  --version                      the version of this program

Environment: HOST (default 127.0.0.1) and PORT (default 3000) of serve,
CARDFLOW_DATA_DIR (default .cardflow), CARDFLOW_URL, CARDFLOW_API_KEY.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitStatus(err, os.Stderr))
}

// exitStatus reports err and returns the process's exit status: 0 for
// success and for help that was asked for, 2 for a command used wrongly,
// 1 for a command that failed.
func exitStatus(err error, stderr io.Writer) int {
	var usage *usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "cardflow: %v\n%s\n", usage.err, usage.hint())
		return 2
	}
	fmt.Fprintln(stderr, "cardflow:", describe(err))
	return 1
}

// describe returns the message of err for a person: a service error reads
// as its own message, without the prefix and code of its Error string.
func describe(err error) string {
	var e *cardflow.Error
	if errors.As(err, &e) {
		return strings.Replace(err.Error(), e.Error(), e.Message, 1)
	}
	return err.Error()
}

// usageError is a command used wrongly: an unknown command or flag, or
// arguments missing or too many.
type usageError struct {
	command string // "trigger", "keys create"; empty for cardflow itself
	err     error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func (e *usageError) hint() string {
	if e.command == "" {
		return "Run 'cardflow --help' for the commands."
	}
	return fmt.Sprintf("Run 'cardflow %s --help' for its arguments and flags.", e.command)
}

func misuse(command, format string, args ...any) error {
	return &usageError{command: command, err: fmt.Errorf(format, args...)}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, overview)
		return misuse("", "no command given")
	}
	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "keys":
		return keys(ctx, args[1:], stdout, stderr)
	case "webhooks":
		return webhooksCommand(ctx, args[1:], stdout, stderr)
	case "limits":
		return limits(ctx, args[1:], stdout, stderr)
	case "trigger":
		return trigger(ctx, args[1:], stdout, stderr)
	case "resume":
		return resume(ctx, args[1:], stdout, stderr)
	case "executions":
		return executions(ctx, args[1:], stdout, stderr)
	case "watch":
		return watch(ctx, args[1:], stdout, stderr)
	case "redrive":
		return redrive(ctx, args[1:], stdout, stderr)
	case "outbox":
		return outbox(ctx, args[1:], stdout, stderr)
	case "links":
		return links(ctx, args[1:], stdout, stderr)
	case "override":
		return override(ctx, args[1:], stdout, stderr)
	case "tables":
		return tables(ctx, args[1:], stdout, stderr)
	case "secrets":
		return secretsCommand(ctx, args[1:], stdout, stderr)
	case "teams":
		return teamsCommand(ctx, args[1:], stdout, stderr)
	case "delegations":
		return delegationsCommand(ctx, args[1:], stdout, stderr)
	case "schema":
		return schemaCommand(args[1:], stdout)
	case "apply":
		return applyCommand(ctx, args[1:], stdout, stderr)
	case "export":
		return exportCommand(ctx, args[1:], stdout, stderr)
	case "approvals":
		return approvalsCommand(ctx, args[1:], stdout, stderr)
	case "workflows":
		return workflowsCommand(ctx, args[1:], stdout, stderr)
	case "cards":
		return cardsCommand(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[1] != "help" && args[0] == "help" {
			return run(ctx, append(args[1:], "--help"), stdout, stderr)
		}
		fmt.Fprint(stdout, overview)
		return nil
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, version())
		return nil
	}
	return misuse("", "unknown command %q", args[0])
}

// version names this build: the module version Go stamped into it, else
// the commit it was built from.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "cardflow (no build information)"
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
		settings := map[string]string{}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		if rev := settings["vcs.revision"]; rev != "" {
			v += " " + rev[:min(len(rev), 12)]
			if settings["vcs.modified"] == "true" {
				v += "+dirty"
			}
		}
	}
	return fmt.Sprintf("cardflow %s (%s)", v, info.GoVersion)
}

// envOr returns the environment variable name, or def when it is unset.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func newLogger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if os.Getenv("LOG_LEVEL") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}
