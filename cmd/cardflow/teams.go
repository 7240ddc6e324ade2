package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

const teamsAbout = `Microsoft Teams settings of an organization, through the API with an admin
key (README "Microsoft Teams").

  conversations   the conversations the bot may post the organization's cards into
`

const conversationsAbout = `The Teams conversations of the key's organization: the bot posts its
workflows' cards only there, and a click there answers only its executions.

  add      register a conversation (POST /v1/teams/registerConversation)
  list     list them (GET /v1/teams/listConversations)
  remove   remove one (POST /v1/teams/removeConversation)
`

func teamsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if _, err := group("teams", teamsAbout, []string{"conversations"}, args, stdout, stderr); err != nil {
		return err
	}
	args = args[1:]
	sub, err := group("teams conversations", conversationsAbout, []string{"add", "list", "remove"}, args, stdout, stderr)
	if err != nil {
		return err
	}
	switch sub {
	case "add":
		c := newCommand("teams conversations add", "CONVERSATION_ID", "Registers a Teams conversation for the key's organization: the id the bot's\nlog shows as conversation_id. A conversation another organization has is\nrefused.\n", stdout)
		client := clientFlags(c)
		serviceURL := c.String("service-url", "", "the conversation's serviceUrl, e.g. https://smba.trafficmanager.net/emea/")
		tenant := c.String("tenant", "", "the Microsoft Entra tenant id of the conversation")
		kind := c.String("kind", "", "personal, groupChat or channel")
		pos, api, _, err := setup(c, client, args[1:], 1, nil)
		if err != nil {
			return err
		}
		body, err := json.Marshal(map[string]string{"conversation_id": pos[0], "service_url": *serviceURL, "tenant_id": *tenant, "kind": *kind})
		if err != nil {
			return err
		}
		var out struct{ Item cardflow.TeamsConversation }
		if err := api.call(ctx, "POST", "/v1/teams/registerConversation", body, nil, &out); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "registered %s for %s\n", out.Item.ConversationID, out.Item.OrganizationID)
		return nil
	case "list":
		c := newCommand("teams conversations list", "", "Lists the key's organization's Teams conversations: id, tenant, kind, how\nand when each was registered.\n", stdout)
		client := clientFlags(c)
		_, api, _, err := setup(c, client, args[1:], 0, nil)
		if err != nil {
			return err
		}
		var out struct{ Items []cardflow.TeamsConversation }
		if err := api.call(ctx, "GET", "/v1/teams/listConversations", nil, nil, &out); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CONVERSATION_ID\tTENANT\tKIND\tSOURCE\tREGISTERED")
		for _, c := range out.Items {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.ConversationID, orDash(c.TenantID), orDash(c.Kind), c.Source, stamp(c.RegisteredOn))
		}
		return tw.Flush()
	}
	c := newCommand("teams conversations remove", "CONVERSATION_ID", "Removes one of the key's organization's Teams conversations: its workflows'\ncards no longer post there, and clicks there answer nothing.\n", stdout)
	client := clientFlags(c)
	pos, api, _, err := setup(c, client, args[1:], 1, nil)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]string{"conversation_id": pos[0]})
	if err != nil {
		return err
	}
	var out struct{ Message string }
	if err := api.call(ctx, "POST", "/v1/teams/removeConversation", body, nil, &out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %s\n", pos[0])
	return nil
}
