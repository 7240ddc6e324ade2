package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is the flag set of one command, with the help it prints for -h
// and --help: its synopsis, what it does, and its flags.
type command struct {
	*flag.FlagSet
	name   string // "trigger", "keys create"
	args   string // the positional arguments of the synopsis, "WORKFLOW_ID"
	about  string // what the command does, ending in a newline
	stdout io.Writer
}

func newCommand(name, args, about string, stdout io.Writer) *command {
	fs := flag.NewFlagSet("cardflow "+name, flag.ContinueOnError)
	// parse returns flag errors and prints the help itself.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &command{FlagSet: fs, name: name, args: args, about: about, stdout: stdout}
}

// dataDir adds --data-dir.
func (c *command) dataDir() *string {
	return c.String("data-dir", envOr("CARDFLOW_DATA_DIR", ".cardflow"), "data directory of the local service; env CARDFLOW_DATA_DIR")
}

// parse parses flags, which may come before or after the positional
// arguments, and returns the positional arguments, of which it wants n.
// For -h and --help it prints the help and returns flag.ErrHelp.
func (c *command) parse(args []string, n int) ([]string, error) {
	var pos []string
	for {
		err := c.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			c.printHelp()
			return nil, err
		}
		if err != nil {
			return nil, &usageError{command: c.name, err: err}
		}
		if c.NArg() == 0 {
			break
		}
		pos = append(pos, c.Arg(0))
		args = c.Args()[1:]
	}
	switch {
	case len(pos) == n:
		return pos, nil
	case n == 0:
		return nil, misuse(c.name, "%s takes no arguments, got %q", c.name, strings.Join(pos, " "))
	}
	return nil, misuse(c.name, "%s takes %s, got %d argument(s)", c.name, c.args, len(pos))
}

func (c *command) printHelp() {
	w := c.stdout
	fmt.Fprintf(w, "usage: cardflow %s", c.name)
	if c.args != "" {
		fmt.Fprintf(w, " %s", c.args)
	}
	fmt.Fprintf(w, " [flags]\n\n%s\nFlags:\n", c.about)
	c.VisitAll(func(f *flag.Flag) {
		value, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  --%s", f.Name)
		if value != "" {
			fmt.Fprintf(w, " %s", value)
		}
		fmt.Fprintf(w, "\n        %s", usage)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// group is a command of subcommands (keys, tables): it routes to the one
// named, and describes them for -h and --help.
func group(name, about string, subcommands []string, args []string, stdout, stderr io.Writer) (string, error) {
	help := fmt.Sprintf("usage: cardflow %s SUBCOMMAND [ARGUMENTS] [FLAGS]\n\n%s\nRun 'cardflow %s SUBCOMMAND --help' for one of them.\n", name, about, name)
	if len(args) == 0 {
		fmt.Fprint(stderr, help)
		return "", misuse(name, "%s needs a subcommand: %s", name, strings.Join(subcommands, ", "))
	}
	switch sub := args[0]; sub {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, help)
		return "", flag.ErrHelp
	default:
		for _, s := range subcommands {
			if s == sub {
				return sub, nil
			}
		}
		return "", misuse(name, "unknown %s subcommand %q; the subcommands are %s", name, sub, strings.Join(subcommands, ", "))
	}
}
