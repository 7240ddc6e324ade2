package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

func links(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("links", "APPROVAL_ID --approver PERSON", `Prints one approver's personal response links to an open approval's card,
one per button, for testing where no card reaches them (the outbox of a
local service). A link answers as its approver, so only an admin key gets
them, and each request is recorded in the execution's log with the key's
actor.
`, stdout)
	client := clientFlags(c)
	approver := c.String("approver", "", "the approver whose links to print (required)")
	pos, api, _, err := setup(c, client, args, 1, nil)
	if err != nil {
		return err
	}
	if strings.TrimSpace(*approver) == "" {
		return misuse(c.name, "links needs --approver PERSON: the approver whose links to print")
	}
	body, err := json.Marshal(map[string]string{"approval_id": pos[0], "approver": *approver})
	if err != nil {
		return err
	}
	var out struct {
		Item struct {
			Links []struct {
				Title string `json:"title"`
				URL   string `json:"url"`
			} `json:"links"`
		} `json:"item"`
	}
	if err := api.call(ctx, "POST", "/v1/approvals/issueApprovalLinks", body, nil, &out); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	for _, l := range out.Item.Links {
		fmt.Fprintf(tw, "%s\t%s\n", l.Title, l.URL)
	}
	return tw.Flush()
}
