package main

import (
	"context"
	"errors"
	"flag"
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

func keys(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	fs, dataDir := newFlags("keys "+args[0], stderr)
	switch args[0] {
	case "create":
		org := fs.String("org", "", "organization id (required)")
		ws := fs.String("workspace", "", "workspace id (required)")
		scopes := fs.String("scopes", "read", "comma-separated scopes: read, execute, admin")
		name := fs.String("name", "", "a name for the key, shown as created_by")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		sc, err := cardflow.ParseScopes(*scopes)
		if err != nil {
			return err
		}
		return withManager(ctx, *dataDir, func(m keyadmin.Manager) error {
			key, rec, err := m.CreateKey(ctx, app.CreateKeyInput{OrganizationID: *org, WorkspaceID: *ws, Scopes: sc, Name: *name})
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "created key %s for %s/%s with scopes %s; it is shown only now:\n", rec.KeyID, rec.OrganizationID, rec.WorkspaceID, strings.Join(rec.Scopes, ","))
			fmt.Fprintln(stdout, key)
			return nil
		})
	case "list":
		org := fs.String("org", "", "only keys of this organization")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return withManager(ctx, *dataDir, func(m keyadmin.Manager) error {
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
	case "revoke":
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return errors.New("keys revoke takes one KEY_ID (see cardflow keys list)")
		}
		return withManager(ctx, *dataDir, func(m keyadmin.Manager) error {
			k, err := m.RevokeKey(ctx, fs.Arg(0))
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "revoked key %s of %s\n", k.KeyID, k.OrganizationID)
			return nil
		})
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown keys command %q", args[0])
}

// withManager runs f against the running server's admin socket when a server
// holds the data directory, else against the store file directly.
func withManager(ctx context.Context, dataDir string, f func(keyadmin.Manager) error) error {
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
