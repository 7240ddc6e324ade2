package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

const approvalsAbout = `Lists, shows and answers approvals on a running service.

  list     the open approvals: a person's key lists what waits on them
  show     one approval, with its approvers and answers
  answer   approve or reject as the key's person
`

func approvalsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, err := group("approvals", approvalsAbout, []string{"list", "show", "answer"}, args, stdout, stderr)
	if err != nil {
		return err
	}
	switch sub {
	case "list":
		c := newCommand("approvals list", "", "Lists the open approvals of the organization, newest first. A key that acts\nfor a person and has no admin scope lists what waits on that person.\n", stdout)
		client := clientFlags(c)
		approver := c.String("approver", "", "only approvals that list this person")
		workflow := c.String("workflow", "", "only approvals of this workflow's executions")
		limit := c.Int("limit", 20, "how many (at most 30)")
		_, api, _, err := setup(c, client, args[1:], 0, nil)
		if err != nil {
			return err
		}
		q := url.Values{"limit": {strconv.Itoa(*limit)}}
		if *approver != "" {
			q.Set("approver", *approver)
		}
		if *workflow != "" {
			q.Set("workflow_id", *workflow)
		}
		var out struct{ Items []approval }
		if err := api.call(ctx, "GET", "/v1/approvals/getPendingApprovals?"+q.Encode(), nil, nil, &out); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "APPROVAL\tSTEP\tPOLICY\tAPPROVERS\tANSWERS\tREQUESTED_BY\tDEADLINE")
		for _, a := range out.Items {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", a.ApprovalID, a.StepName, a.Policy, strings.Join(a.Approvers, ","), len(a.Answers), dash(a.TriggeredBy), millis(a.Deadline))
		}
		return tw.Flush()
	case "show":
		c := newCommand("approvals show", "APPROVAL_ID", "Shows one approval, open or decided, with its approvers and answers.\n", stdout)
		client := clientFlags(c)
		pos, api, _, err := setup(c, client, args[1:], 1, nil)
		if err != nil {
			return err
		}
		var out struct{ Item approval }
		if err := api.call(ctx, "GET", "/v1/approvals/getApprovalById?approval_id="+url.QueryEscape(pos[0]), nil, nil, &out); err != nil {
			return err
		}
		printApproval(stdout, out.Item)
		return nil
	}
	c := newCommand("approvals answer", "APPROVAL_ID", "Approves or rejects an approval as the person the API key acts for\n(`cardflow keys create --actor`).\n", stdout)
	client := clientFlags(c)
	decision := c.String("decision", "", "approve or reject")
	comment := c.String("comment", "", "a comment the other approvers and the audit trail see")
	pos, err := c.parse(args[1:], 1)
	if err != nil {
		return err
	}
	if *decision != "approve" && *decision != "reject" {
		return misuse("approvals answer", "--decision must be approve or reject")
	}
	api, err := client()
	if err != nil {
		return err
	}
	req := map[string]string{"approval_id": pos[0], "decision": *decision}
	if *comment != "" {
		req["comment"] = *comment
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	var out struct{ Item approval }
	if err := api.call(ctx, "POST", "/v1/approvals/answerApproval", b, nil, &out); err != nil {
		return err
	}
	printApproval(stdout, out.Item)
	return nil
}

type approval struct {
	ApprovalID  string   `json:"approval_id"`
	WorkflowID  string   `json:"workflow_id"`
	ExecutionID string   `json:"workflow_execution_id"`
	StepName    string   `json:"step_name"`
	Policy      string   `json:"policy"`
	Approvers   []string `json:"approvers"`
	TriggeredBy string   `json:"triggered_by"`
	Status      string   `json:"status"`
	Deadline    int64    `json:"deadline"`
	DecidedBy   string   `json:"decided_by"`
	Answers     []struct {
		Approver string `json:"approver"`
		Decision string `json:"decision"`
		Comment  string `json:"comment"`
		At       int64  `json:"at"`
		Channel  string `json:"channel"`
	} `json:"answers"`
}

func printApproval(w io.Writer, a approval) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "approval\t%s\n", a.ApprovalID)
	fmt.Fprintf(tw, "status\t%s\n", a.Status)
	fmt.Fprintf(tw, "step\t%s\n", a.StepName)
	fmt.Fprintf(tw, "execution\t%s %s\n", a.WorkflowID, a.ExecutionID)
	fmt.Fprintf(tw, "policy\t%s\n", a.Policy)
	fmt.Fprintf(tw, "approvers\t%s\n", strings.Join(a.Approvers, ", "))
	fmt.Fprintf(tw, "requested by\t%s\n", dash(a.TriggeredBy))
	fmt.Fprintf(tw, "deadline\t%s\n", millis(a.Deadline))
	if a.DecidedBy != "" {
		fmt.Fprintf(tw, "decided by\t%s\n", a.DecidedBy)
	}
	for _, ans := range a.Answers {
		fmt.Fprintf(tw, "answer\t%s %s %s via %s %s\n", millis(ans.At), ans.Approver, ans.Decision, ans.Channel, ans.Comment)
	}
	tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func millis(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format(time.DateTime)
}

const workflowsAbout = `Lists, shows and publishes workflows on a running service.

  list      every workflow at its highest version
  show      one version as a file of ` + "`cardflow apply`" + ` (default: the highest)
  publish   make a version ACTIVE and latest
`

const cardsAbout = `Lists, shows and publishes cards on a running service.

  list      every card at its highest version
  show      one version as a file of ` + "`cardflow apply`" + ` (default: the highest)
  publish   make a version ACTIVE and latest
`

func workflowsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return recordsCommand(ctx, "workflows", workflowsAbout, workflowKind, args, stdout, stderr)
}

func cardsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return recordsCommand(ctx, "cards", cardsAbout, cardKind, args, stdout, stderr)
}

// recordsCommand is `cardflow workflows` and `cardflow cards`: the two
// kinds of versioned record share their commands.
func recordsCommand(ctx context.Context, name, about string, spec kindSpec, args []string, stdout, stderr io.Writer) error {
	sub, err := group(name, about, []string{"list", "show", "publish"}, args, stdout, stderr)
	if err != nil {
		return err
	}
	noun := strings.ToUpper(spec.kind)
	switch sub {
	case "list":
		c := newCommand(name+" list", "", "Lists every "+strings.ToLower(spec.kind)+" of the organization at its highest version.\n", stdout)
		client := clientFlags(c)
		_, api, _, err := setup(c, client, args[1:], 0, nil)
		if err != nil {
			return err
		}
		records, err := listRecords(ctx, api, spec)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "%s\tNAME\tVERSION\tSTATUS\n", noun)
		for _, r := range sorted(records) {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", r.id, r.name, r.version, r.status)
		}
		return tw.Flush()
	case "show":
		c := newCommand(name+" show", noun+"_ID", "Prints one version of a "+strings.ToLower(spec.kind)+" as a document of `cardflow apply`, in YAML.\n", stdout)
		client := clientFlags(c)
		version := c.Int("version", 0, "the version (default: the highest)")
		pos, api, _, err := setup(c, client, args[1:], 1, nil)
		if err != nil {
			return err
		}
		v := *version
		if v == 0 {
			records, err := listRecords(ctx, api, spec)
			if err != nil {
				return err
			}
			r, ok := records[pos[0]]
			if !ok {
				return fmt.Errorf("the organization has no %s %s", strings.ToLower(spec.kind), pos[0])
			}
			v = r.version
		}
		item, err := getVersion(ctx, api, spec, pos[0], v)
		if err != nil {
			return err
		}
		status, _ := item[statusField(spec)].(string)
		fmt.Fprintf(stdout, "# version %d, %s\n", v, status)
		return printDocument(item, spec, stdout)
	}
	c := newCommand(name+" publish", noun+"_ID VERSION", "Makes a version ACTIVE and the latest of its "+strings.ToLower(spec.kind)+".\n", stdout)
	client := clientFlags(c)
	pos, err := c.parse(args[1:], 2)
	if err != nil {
		return err
	}
	v, err := strconv.Atoi(pos[1])
	if err != nil || v < 1 {
		return misuse(name+" publish", "VERSION must be a whole number from 1, got %q", pos[1])
	}
	api, err := client()
	if err != nil {
		return err
	}
	if err := publishVersion(ctx, api, spec, pos[0], v); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s %s version %d: ACTIVE\n", spec.kind, pos[0], v)
	return nil
}
