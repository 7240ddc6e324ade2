package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cardflow/cardflow/pkg/secrets"
)

const secretsUsage = `usage:
  cardflow secrets path (--org ORG | --deployment) [--as env|file|secretsmanager] NAME
  cardflow secrets set (--org ORG | --deployment) [--dir DIR] NAME < value

A workflow names the secrets of its own organization only; the deployment's
own secrets (the Teams signing key, the bot's client secret) are apart, and
no workflow can name them.

path prints where the secret NAME is set: its environment variable, its file
under CARDFLOW_SECRETS_DIR and its Secrets Manager secret (with
CARDFLOW_SECRETS_PREFIX, default cardflow/); --as prints only one of them.

set writes the value read from standard input (without trailing newlines)
to the secret's file under --dir (default $CARDFLOW_SECRETS_DIR), which
cardflow serve reads with CARDFLOW_SECRETS_DIR set to that directory.
`

func secretsCommand(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "path" && args[0] != "set" {
		fmt.Fprint(stderr, secretsUsage)
		return flag.ErrHelp
	}
	fs := flag.NewFlagSet("secrets "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, secretsUsage) }
	org := fs.String("org", "", "the organization whose secret it is")
	deployment := fs.Bool("deployment", false, "the secret is the deployment's own")
	as := fs.String("as", "", "path: print only env, file or secretsmanager")
	dir := fs.String("dir", os.Getenv(secrets.DirEnv), "set: the secrets directory")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return fmt.Errorf("secrets %s takes one secret NAME", args[0])
	}
	var k secrets.Key
	switch {
	case *deployment && *org != "":
		return errors.New("name --org or --deployment, not both")
	case *deployment:
		k = secrets.DeploymentKey(fs.Arg(0))
	case *org != "":
		k = secrets.OrganizationKey(*org, fs.Arg(0))
	default:
		return errors.New("name the secret's owner: --org ORG, or --deployment for the deployment's own")
	}
	if err := k.Validate(); err != nil {
		return err
	}
	if args[0] == "set" {
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
		return errors.New("the value is empty: give it on standard input, such as printf '%s' \"$VALUE\" | cardflow secrets set ...")
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
