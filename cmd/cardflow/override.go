package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

func override(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("override", "APPROVAL_ID --decision approve|reject --reason TEXT", `Decides an open approval without its approvers on a running service
(overrideApproval): an admin's act, which needs an admin key and a reason.
The approval becomes OVERRIDDEN, its step leaves by the decision's exit,
and the approval and the execution's log record who overrode it and why.
`, stdout)
	client := clientFlags(c)
	decision := c.String("decision", "", "approve or reject (required)")
	reason := c.String("reason", "", "why the approval is decided without its approvers (required)")
	pos, err := c.parse(args, 1)
	if err != nil {
		return err
	}
	// Checked here too, so that a mistyped command sends nothing.
	if *decision != "approve" && *decision != "reject" {
		return misuse(c.name, "override needs --decision approve or --decision reject, got %q", *decision)
	}
	if strings.TrimSpace(*reason) == "" {
		return misuse(c.name, "override needs --reason TEXT: why the approval is decided without its approvers")
	}
	api, err := client()
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]string{"approval_id": pos[0], "decision": *decision, "reason": *reason})
	if err != nil {
		return err
	}
	var out struct {
		Item struct {
			ApprovalID string `json:"approval_id"`
			Status     string `json:"status"`
			Override   struct {
				Actor    string `json:"actor"`
				Decision string `json:"decision"`
			} `json:"override"`
		} `json:"item"`
	}
	if err := api.call(ctx, "POST", "/v1/approvals/overrideApproval", body, nil, &out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s (%s) by %s\n", out.Item.ApprovalID, out.Item.Status, out.Item.Override.Decision, out.Item.Override.Actor)
	return nil
}
