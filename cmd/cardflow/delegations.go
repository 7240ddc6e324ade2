package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

const delegationsAbout = `Delegations of the key's organization: for a period, a person's new
approvals go to a delegate (README "Delegation").

  set      hand a person's approvals to a delegate (POST /v1/approvals/setDelegation)
  list     list delegations (GET /v1/approvals/getDelegations)
  remove   remove one (POST /v1/approvals/removeDelegation)
`

func delegationsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, err := group("delegations", delegationsAbout, []string{"set", "list", "remove"}, args, stdout, stderr)
	if err != nil {
		return err
	}
	switch sub {
	case "set":
		c := newCommand("delegations set", "DELEGATE", "Hands the key's person's new approvals (with an admin key, --approver's) to\nDELEGATE from --starts to --ends.\n", stdout)
		client := clientFlags(c)
		approver := c.String("approver", "", "whose approvals (an admin key may name anyone; default the key's person)")
		starts := c.String("starts", "", "when it starts, RFC 3339 (default now)")
		ends := c.String("ends", "", "when it ends, RFC 3339 (required)")
		move := c.Bool("move-pending", false, "move the pending approvals to the delegate too")
		pos, api, _, err := setup(c, client, args[1:], 1, nil)
		if err != nil {
			return err
		}
		from, to := time.Now(), time.Time{}
		if *starts != "" {
			if from, err = time.Parse(time.RFC3339, *starts); err != nil {
				return misuse("delegations set", "--starts must be a time as RFC 3339 writes it, e.g. 2026-12-24T00:00:00Z")
			}
		}
		if to, err = time.Parse(time.RFC3339, *ends); err != nil {
			return misuse("delegations set", "--ends is required: a time as RFC 3339 writes it, e.g. 2027-01-02T00:00:00Z")
		}
		body, err := json.Marshal(map[string]any{"approver": *approver, "delegate": pos[0], "starts_on": from.UnixMilli(), "ends_on": to.UnixMilli(), "move_pending": *move})
		if err != nil {
			return err
		}
		var out struct {
			Item struct {
				Delegation cardflow.Delegation
				Moved      []string
			}
		}
		if err := api.call(ctx, "POST", "/v1/approvals/setDelegation", body, nil, &out); err != nil {
			return err
		}
		d := out.Item.Delegation
		fmt.Fprintf(stdout, "delegation %s: %s's approvals go to %s from %s to %s\n", d.DelegationID, d.Approver, d.Delegate, stamp(d.StartsOn), stamp(d.EndsOn))
		if *move {
			fmt.Fprintf(stdout, "moved %d pending approvals\n", len(out.Item.Moved))
		}
		return nil
	case "list":
		c := newCommand("delegations list", "", "Lists delegations: an admin key's, the organization's; another key's, those\nits person gives or receives.\n", stdout)
		client := clientFlags(c)
		approver := c.String("approver", "", "only this approver's")
		ids := c.Bool("ids", false, "print only the delegation ids, one a line")
		_, api, _, err := setup(c, client, args[1:], 0, nil)
		if err != nil {
			return err
		}
		path := "/v1/approvals/getDelegations"
		if *approver != "" {
			path += "?approver=" + url.QueryEscape(*approver)
		}
		var out struct{ Items []cardflow.Delegation }
		if err := api.call(ctx, "GET", path, nil, nil, &out); err != nil {
			return err
		}
		if *ids {
			for _, d := range out.Items {
				fmt.Fprintln(stdout, d.DelegationID)
			}
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "DELEGATION_ID\tAPPROVER\tDELEGATE\tSTARTS\tENDS")
		for _, d := range out.Items {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.DelegationID, d.Approver, d.Delegate, stamp(d.StartsOn), stamp(d.EndsOn))
		}
		return tw.Flush()
	}
	c := newCommand("delegations remove", "DELEGATION_ID", "Removes a delegation; the approvals it handed on stay with the delegate.\n", stdout)
	client := clientFlags(c)
	pos, api, _, err := setup(c, client, args[1:], 1, nil)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]string{"delegation_id": pos[0]})
	if err != nil {
		return err
	}
	var out struct{ Item cardflow.Delegation }
	if err := api.call(ctx, "POST", "/v1/approvals/removeDelegation", body, nil, &out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed delegation %s of %s\n", out.Item.DelegationID, out.Item.Approver)
	return nil
}
