package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/keyadmin"
	"github.com/cardflow/cardflow/pkg/localmode"
)

const keysAbout = `Manages the API keys of the local service. While ` + "`cardflow serve`" + ` runs, the
commands go to it through the admin socket in its data directory; otherwise
they open the store themselves.

  create   create a key for an organization and workspace; prints it, once
  list     list the keys (never the keys themselves: ids, tenants and scopes)
  revoke   revoke a key by its id
`

func keys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	sub, err := group("keys", keysAbout, []string{"create", "list", "revoke"}, args, stdout, stderr)
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		c := newCommand("keys create", "", "Creates an API key of an organization and workspace with the scopes given, and\nprints it on stdout. Only its hash is stored: it is shown this once.\n", stdout)
		dataDir := c.dataDir()
		org := c.String("org", "", "organization id (required)")
		ws := c.String("workspace", "", "workspace id (required)")
		scopes := c.String("scopes", "read", "comma-separated scopes: read, execute, admin")
		name := c.String("name", "", "a name for the key, shown as created_by")
		actor := c.String("actor", "", "the person the key acts for (Entra ID object id, UPN or e-mail address): it answers approvals as them")
		if _, err := c.parse(args[1:], 0); err != nil {
			return err
		}
		sc, err := cardflow.ParseScopes(*scopes)
		if err != nil {
			return err
		}
		return withManager(ctx, *dataDir, func(m keyadmin.Admin) error {
			key, rec, err := m.CreateKey(ctx, app.CreateKeyInput{OrganizationID: *org, WorkspaceID: *ws, Scopes: sc, Name: *name, Person: *actor})
			if err != nil {
				return err
			}
			who := ""
			if rec.Person != "" {
				who = " acting for " + rec.Person
			}
			fmt.Fprintf(stderr, "created key %s for %s/%s with scopes %s%s; it is shown only now:\n", rec.KeyID, rec.OrganizationID, rec.WorkspaceID, strings.Join(rec.Scopes, ","), who)
			fmt.Fprintln(stdout, key)
			return nil
		})
	case "list":
		c := newCommand("keys list", "", "Lists the API keys: id, organization, workspace, scopes, name, when created\nand when revoked. The keys themselves are not stored and cannot be shown.\n", stdout)
		dataDir := c.dataDir()
		org := c.String("org", "", "only keys of this organization")
		if _, err := c.parse(args[1:], 0); err != nil {
			return err
		}
		return withManager(ctx, *dataDir, func(m keyadmin.Admin) error {
			list, err := m.ListKeys(ctx, *org)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY_ID\tORGANIZATION\tWORKSPACE\tSCOPES\tNAME\tCREATED\tREVOKED")
			for _, k := range list {
				revoked := "-"
				if k.RevokedOn != 0 {
					revoked = stamp(k.RevokedOn)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.KeyID, k.OrganizationID, k.WorkspaceID, strings.Join(k.Scopes, ","), orDash(k.Name), stamp(k.CreatedOn), revoked)
			}
			return tw.Flush()
		})
	}
	c := newCommand("keys revoke", "KEY_ID", "Revokes the API key with this id (the KEY_ID column of `cardflow keys list`);\nrequests with it are 401 from then on.\n", stdout)
	dataDir := c.dataDir()
	pos, err := c.parse(args[1:], 1)
	if err != nil {
		return err
	}
	return withManager(ctx, *dataDir, func(m keyadmin.Admin) error {
		k, err := m.RevokeKey(ctx, pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked key %s of %s\n", k.KeyID, k.OrganizationID)
		return nil
	})
}

// withManager runs f against the running server's admin socket when a server
// holds the data directory, else against the store file directly.
func withManager(ctx context.Context, dataDir string, f func(keyadmin.Admin) error) error {
	if c, err := keyadmin.Dial(filepath.Join(dataDir, localmode.SocketFile)); err == nil {
		return f(c)
	}
	svc, err := localmode.OpenService(dataDir)
	if err != nil {
		return err
	}
	defer svc.Store().Close()
	return f(svc)
}

func stamp(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
