package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/secrets"
)

func TestSecretsPath(t *testing.T) {
	t.Setenv(secrets.DirEnv, "/etc/cardflow/secrets")
	t.Setenv(secrets.PrefixEnv, "prod/")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"secrets", "path", "--org", "acme", "sap-prod"},
			"environment      CARDFLOW_SECRET_ACME__SAP_PROD\nfile             /etc/cardflow/secrets/org/acme/sap-prod\nSecrets Manager  prod/org/acme/sap-prod\n"},
		{[]string{"secrets", "path", "--deployment", "teams-signing"},
			"environment      CARDFLOW_DEPLOYMENT_SECRET_TEAMS_SIGNING\nfile             /etc/cardflow/secrets/deployment/teams-signing\nSecrets Manager  prod/deployment/teams-signing\n"},
		{[]string{"secrets", "path", "--org", "Acme.eu", "--as", "env", "sap-prod"}, "CARDFLOW_SECRET__41636D652E6575__SAP_PROD\n"},
		{[]string{"secrets", "path", "--org", "acme", "--as", "secretsmanager", "team/hook"}, "prod/org/acme/team/hook\n"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), tc.args, &stdout, &stderr); err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if got := stdout.String(); got != tc.want {
			t.Errorf("%q: got\n%s\nwant\n%s", tc.args, got, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"secrets"}, ""},
		{[]string{"secrets", "get", "--org", "acme", "x"}, ""},
		{[]string{"secrets", "path", "sap-prod"}, "--org ORG, or --deployment"},
		{[]string{"secrets", "path", "--org", "acme", "--deployment", "sap-prod"}, "not both"},
		{[]string{"secrets", "path", "--org", "acme"}, "takes NAME"},
		{[]string{"secrets", "path", "--org", "acme", "../deployment/teams-signing"}, "is not a secret name"},
		{[]string{"secrets", "path", "--org", "../deployment", "teams-signing"}, "is not an organization id"},
		{[]string{"secrets", "path", "--org", "acme", "--as", "vault", "x"}, "want env, file or secretsmanager"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

// TestSecretsSet writes secrets as an operator does and reads them as the
// service does: each organization's from its own file, the deployment's
// from its own, and none through another's name.
func TestSecretsSet(t *testing.T) {
	dir := t.TempDir()
	set := func(k secrets.Key, value string) {
		t.Helper()
		var stderr bytes.Buffer
		if err := setSecret(k, dir, strings.NewReader(value), &stderr); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stderr.String(), strings.TrimSpace(value)) {
			t.Errorf("set printed the value: %s", stderr.String())
		}
	}
	set(secrets.OrganizationKey("acme", "approvals-hook"), "https://hooks.example.com/acme\n")
	set(secrets.OrganizationKey("globex", "approvals-hook"), "https://hooks.example.com/globex")
	set(secrets.DeploymentKey("teams-signing"), "0123456789abcdef0123456789abcdef")
	set(secrets.OrganizationKey("acme", "approvals-hook"), "https://hooks.example.com/acme-2") // replaced

	st := secrets.Dir{Path: dir}
	ctx := context.Background()
	for _, tc := range []struct {
		src        secrets.Source
		name, want string
	}{
		{secrets.ForOrganization(st, "acme"), "approvals-hook", "https://hooks.example.com/acme-2"},
		{secrets.ForOrganization(st, "globex"), "approvals-hook", "https://hooks.example.com/globex"},
		{secrets.ForDeployment(st), "teams-signing", "0123456789abcdef0123456789abcdef"},
		{secrets.ForOrganization(st, "acme"), "teams-signing", ""},
	} {
		got, err := tc.src.Secret(ctx, tc.name)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	info, err := os.Stat(filepath.Join(dir, "org", "acme", "approvals-hook"))
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != 0o600 {
		t.Errorf("the file's mode is %v, want 0600", got)
	}
	var stderr bytes.Buffer
	if err := setSecret(secrets.OrganizationKey("acme", "x"), dir, strings.NewReader("\n"), &stderr); err == nil {
		t.Error("an empty value: got no error")
	}
	if err := setSecret(secrets.OrganizationKey("acme", "x"), "", strings.NewReader("v"), &stderr); err == nil {
		t.Error("no directory: got no error")
	}
}
