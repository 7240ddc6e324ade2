package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/keyadmin"
)

const webhooksAbout = `Manages the webhooks of the local service: each receives its organization's
events (every execution status change and approval decision), signed as
Standard Webhooks sign them (README "Events"). While ` + "`cardflow serve`" + ` runs, the commands go to
it through the admin socket in its data directory; otherwise they open the
store themselves.

  add      add a webhook of an organization; prints its signing secret, once
  list     list the webhooks (never their secrets)
  remove   remove a webhook by its id
  rotate   give a webhook a new signing secret; prints it, once
`

func webhooksCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, err := group("webhooks", webhooksAbout, []string{"add", "list", "remove", "rotate"}, args, stdout, stderr)
	if err != nil {
		return err
	}
	switch sub {
	case "add":
		c := newCommand("webhooks add", "URL", "Adds a webhook that receives the events of an organization, and prints the\nsecret that signs its deliveries on stdout. It is shown this once.\n", stdout)
		dataDir := c.dataDir()
		org := c.String("org", "", "organization id (required)")
		pos, err := c.parse(args[1:], 1)
		if err != nil {
			return err
		}
		return withManager(ctx, *dataDir, func(m keyadmin.Admin) error {
			w, err := m.AddWebhook(ctx, *org, pos[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "added webhook %s of %s to %s; its signing secret is shown only now:\n", w.WebhookID, w.OrganizationID, w.URL)
			fmt.Fprintln(stdout, w.Secret)
			return nil
		})
	case "list":
		c := newCommand("webhooks list", "", "Lists the webhooks: id, organization, URL and when added. Their secrets are\nnever shown again.\n", stdout)
		dataDir := c.dataDir()
		org := c.String("org", "", "only webhooks of this organization")
		if _, err := c.parse(args[1:], 0); err != nil {
			return err
		}
		return withManager(ctx, *dataDir, func(m keyadmin.Admin) error {
			list, err := m.ListWebhooks(ctx, *org)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "WEBHOOK_ID\tORGANIZATION\tURL\tCREATED")
			for _, w := range list {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", w.WebhookID, w.OrganizationID, w.URL, stamp(w.CreatedOn))
			}
			return tw.Flush()
		})
	case "rotate":
		c := newCommand("webhooks rotate", "WEBHOOK_ID", "Gives a webhook a new signing secret and prints it on stdout, this once. For\n--keep-previous more, each delivery carries a signature under the old secret\ntoo, so the receiver can move to the new secret without refusing any.\n", stdout)
		dataDir := c.dataDir()
		org := c.String("org", "", "the webhook's organization (optional)")
		keep := c.Duration("keep-previous", 24*time.Hour, fmt.Sprintf("how long the old secret keeps signing (0 ends it now; at most %.0fh)", app.MaxKeepPrevious.Hours()))
		pos, err := c.parse(args[1:], 1)
		if err != nil {
			return err
		}
		return withManager(ctx, *dataDir, func(m keyadmin.Admin) error {
			w, err := m.RotateWebhook(ctx, *org, pos[0], *keep)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "rotated the secret of webhook %s of %s; the old one signs too until %s; the new one is shown only now:\n",
				w.WebhookID, w.OrganizationID, stamp(w.PreviousSecretUntil))
			fmt.Fprintln(stdout, w.Secret)
			return nil
		})
	}
	c := newCommand("webhooks remove", "WEBHOOK_ID", "Removes the webhook with this id (the WEBHOOK_ID column of `cardflow webhooks\nlist`); it receives no more events, not even those still pending.\n", stdout)
	dataDir := c.dataDir()
	org := c.String("org", "", "the webhook's organization (optional)")
	pos, err := c.parse(args[1:], 1)
	if err != nil {
		return err
	}
	return withManager(ctx, *dataDir, func(m keyadmin.Admin) error {
		w, err := m.RemoveWebhook(ctx, *org, pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed webhook %s of %s\n", w.WebhookID, w.OrganizationID)
		return nil
	})
}
