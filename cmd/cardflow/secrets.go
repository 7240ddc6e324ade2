package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cardflow/cardflow/pkg/secrets"
)

const secretsAbout = `Shows where a secret is set and sets one in the secrets directory. A
workflow names the secrets of its own organization only; the deployment's
own secrets (the Teams signing key, the bot's client secret) are apart, and
no workflow can name them.

  path   where the secret NAME is set: its environment variable, its file
         under CARDFLOW_SECRETS_DIR and its Secrets Manager secret (with
         CARDFLOW_SECRETS_PREFIX, default cardflow/)
  set    writes the value read from standard input (without trailing
         newlines) to the secret's file under --dir, which cardflow serve
         reads with CARDFLOW_SECRETS_DIR set to that directory
`

func secretsCommand(_ context.Context, args []string, stdout, stderr io.Writer) error {
	sub, err := group("secrets", secretsAbout, []string{"path", "set"}, args, stdout, stderr)
	if err != nil {
		return err
	}
	about := map[string]string{
		"path": "Prints where the secret NAME of an organization (--org) or of the deployment\n(--deployment) is set in each kind of store, or in the one --as names.\n",
		"set":  "Writes the value read from standard input to the file of the secret NAME of\nan organization (--org) or of the deployment (--deployment) under --dir,\nreadable by its owner only.\n",
	}[sub]
	c := newCommand("secrets "+sub, "NAME", about, stdout)
	org := c.String("org", "", "the organization whose secret it is")
	deployment := c.Bool("deployment", false, "the secret is the deployment's own")
	var as, dir *string
	if sub == "path" {
		as = c.String("as", "", "print only one place: env, file or secretsmanager")
	} else {
		dir = c.String("dir", os.Getenv(secrets.DirEnv), "the secrets directory; env "+secrets.DirEnv)
	}
	pos, err := c.parse(args[1:], 1)
	if err != nil {
		return err
	}
	var k secrets.Key
	switch {
	case *deployment && *org != "":
		return misuse(c.name, "name --org or --deployment, not both")
	case *deployment:
		k = secrets.DeploymentKey(pos[0])
	case *org != "":
		k = secrets.OrganizationKey(*org, pos[0])
	default:
		return misuse(c.name, "name the secret's owner: --org ORG, or --deployment for the deployment's own")
	}
	if err := k.Validate(); err != nil {
		return err
	}
	if sub == "set" {
		return setSecret(k, *dir, os.Stdin, stderr)
	}
	return printSecretPath(k, *as, stdout)
}

// printSecretPath prints where k is set in each kind of store, or in the
// one as names.
func printSecretPath(k secrets.Key, as string, stdout io.Writer) error {
	dir := os.Getenv(secrets.DirEnv)
	if dir == "" {
		dir = "$" + secrets.DirEnv
	}
	places := map[string]string{
		"env":            secrets.EnvName(k),
		"file":           filepath.Join(dir, filepath.FromSlash(k.Path())),
		"secretsmanager": secrets.SecretsManagerID(secrets.PrefixFromEnv(), k),
	}
	if as != "" {
		p, ok := places[as]
		if !ok {
			return fmt.Errorf("--as %s: want env, file or secretsmanager", as)
		}
		fmt.Fprintln(stdout, p)
		return nil
	}
	fmt.Fprintf(stdout, "environment      %s\nfile             %s\nSecrets Manager  %s\n", places["env"], places["file"], places["secretsmanager"])
	return nil
}

// setSecret writes the value read from in to k's file under dir, readable
// by its owner only.
func setSecret(k secrets.Key, dir string, in io.Reader, stderr io.Writer) error {
	if dir == "" {
		return fmt.Errorf("set needs the secrets directory: --dir DIR or %s", secrets.DirEnv)
	}
	b, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return errors.New("the value is empty: give it on standard input, such as printf '%s' \"$VALUE\" | cardflow secrets set NAME")
	}
	file := filepath.Join(dir, filepath.FromSlash(k.Path()))
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	// Write beside the file and rename, so a reader never sees half a value.
	tmp, err := os.CreateTemp(filepath.Dir(file), ".set-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(v); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s; cardflow serve reads it with %s=%s\n", file, secrets.DirEnv, dir)
	return nil
}
