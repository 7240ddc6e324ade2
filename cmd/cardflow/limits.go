package main

import (
	"context"
	"fmt"
	"io"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/keyadmin"
)

const limitsAbout = `Sets an organization's own limits, over the defaults that serve's --org-*
flags (on AWS the stack's parameters) give every organization. While
` + "`cardflow serve`" + ` runs, the commands go to it through the admin socket and take
effect at once; otherwise they open the store themselves (CARDFLOW_STORE=dynamodb
reaches a deployment's tables, where functions see a change within 30 s).

  show    the organization's own limits, or that the defaults hold
  set     set the limits given; those not given keep the defaults
  clear   drop the organization's own limits: the defaults hold again
`

func limits(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, err := group("limits", limitsAbout, []string{"show", "set", "clear"}, args, stdout, stderr)
	if err != nil {
		return err
	}
	c := newCommand("limits "+sub, "ORG", "", stdout)
	dataDir := c.dataDir()
	var rate, burst, maxOpen *string
	if sub == "set" {
		rate = c.String("rate", "", "requests a second the organization's keys may make together")
		burst = c.String("burst", "", "requests it may make at once above the rate")
		maxOpen = c.String("max-open", "", "open executions it may have")
	}
	pos, err := c.parse(args[1:], 1)
	if err != nil {
		return err
	}
	org := pos[0]
	return withManager(ctx, *dataDir, func(m keyadmin.Admin) error {
		switch sub {
		case "show":
			l, err := m.OrganizationLimits(ctx, org)
			if cardflow.ErrorCode(err) == cardflow.ENOTFOUND {
				fmt.Fprintf(stdout, "%s has no limits of its own: the defaults hold\n", org)
				return nil
			}
			if err != nil {
				return err
			}
			printLimits(stdout, l)
			return nil
		case "set":
			l, err := cardflow.ParseLimits(*rate, *burst, *maxOpen)
			if err != nil {
				return err
			}
			if *burst == "" {
				l.Burst = 0 // keep the default burst
			}
			l.OrganizationID = org
			set, err := m.SetLimits(ctx, l)
			if err != nil {
				return err
			}
			printLimits(stdout, set)
			return nil
		}
		if err := m.ClearLimits(ctx, org); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s has no limits of its own now: the defaults hold\n", org)
		return nil
	})
}

func printLimits(w io.Writer, l *cardflow.Limits) {
	show := func(set bool, v any) any {
		if !set {
			return "default"
		}
		return v
	}
	fmt.Fprintf(w, "organization %s\nrate         %v requests/s\nburst        %v\nmax open     %v executions\n", l.OrganizationID,
		show(l.RatePerSecond > 0, l.RatePerSecond), show(l.Burst > 0, l.Burst), show(l.MaxOpenExecutions > 0, l.MaxOpenExecutions))
}
