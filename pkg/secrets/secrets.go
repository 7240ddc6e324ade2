// Package secrets resolves secret references by name: from AWS Secrets
// Manager on AWS, from the environment or a directory of files locally.
//
// Every secret lives in a namespace. An organization's workflows name the
// secrets of that organization only (ForOrganization); the deployment's own
// secrets, such as the Teams signing key and the bot's client secret, are
// in a namespace of their own (ForDeployment) that no workflow can name.
// The stores (Env, Dir, SecretsManager, and Chain and Cache over them) read
// a Key, which carries the namespace, and keep namespaces apart however
// names and organization ids are spelled. A Source answers a secret it
// cannot return with one neutral error that names the secret and says
// nothing of where it would be stored or whether it exists elsewhere.
package secrets

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Source resolves a secret by name within one namespace. It is what the
// engine's steps, SAP profiles and Teams deliveries read.
type Source interface {
	Secret(ctx context.Context, name string) (string, error)
}

// Store reads secrets by key. Env, Dir, SecretsManager, Chain and Cache are
// stores; wrap one in ForOrganization or ForDeployment to read it by name.
type Store interface {
	Get(ctx context.Context, k Key) (string, error)
}

// ErrNotFound is wrapped by the errors of a secret no store has. Its
// NotFound method lets a package tell such an error apart without
// importing this one and, with it, the Secrets Manager client.
var ErrNotFound error = notFound{}

type notFound struct{}

func (notFound) Error() string  { return "secret not found" }
func (notFound) NotFound() bool { return true }

// namePattern is Secrets Manager's names (letters, digits and _ . @ + = - /)
// cut into segments by "/", each starting with a letter or digit, so a name
// has no "", "." or ".." segment to climb out of a directory with.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@+=-]*(/[A-Za-z0-9][A-Za-z0-9_.@+=-]*)*$`)

// maxName bounds a name; with the longest organization id and a prefix of
// up to 180 characters a Secrets Manager id stays within its 512.
const maxName = 256

// ValidName reports whether name can reference a secret: up to 256 letters,
// digits and _ . @ + = - /, where every part between slashes starts with a
// letter or digit.
func ValidName(name string) bool { return len(name) <= maxName && namePattern.MatchString(name) }

// organizationPattern is the organization ids API keys are made for
// (app.CreateKey): no "/", and never "." or "..". It is kept apart from
// that check on purpose: were organization ids ever to allow more, an id
// this package cannot place safely reads no secret at all.
var organizationPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Key is a secret's place in a store: its namespace (an organization's or
// the deployment's) and its name there. Make one with OrganizationKey or
// DeploymentKey; the zero Key is invalid.
type Key struct {
	org        string
	name       string
	deployment bool
}

// OrganizationKey is the key of the secret name of organization org.
func OrganizationKey(org, name string) Key { return Key{org: org, name: name} }

// DeploymentKey is the key of the deployment's own secret name.
func DeploymentKey(name string) Key { return Key{name: name, deployment: true} }

// Name is the secret's name within its namespace.
func (k Key) Name() string { return k.name }

// Validate says what is wrong with a key, if anything.
func (k Key) Validate() error {
	if !k.deployment && !organizationPattern.MatchString(k.org) {
		return fmt.Errorf("%q is not an organization id: 1 to 64 letters, digits, . _ or -, starting with a letter or digit", k.org)
	}
	if !ValidName(k.name) {
		return fmt.Errorf("%q is not a secret name: up to 256 letters, digits and _ . @ + = - /, every part between slashes starting with a letter or digit", k.name)
	}
	return nil
}

// Path is the key as a slash-separated path, the same for files and
// Secrets Manager: org/<organization id>/<name> for an organization's
// secret, deployment/<name> for the deployment's. An organization id holds
// no "/", so the first two segments always name the organization.
func (k Key) Path() string {
	if k.deployment {
		return "deployment/" + k.name
	}
	return "org/" + k.org + "/" + k.name
}

// Environment variables of secrets.
const (
	// OrganizationEnvPrefix starts the variable of an organization's secret.
	OrganizationEnvPrefix = "CARDFLOW_SECRET_"
	// DeploymentEnvPrefix starts the variable of a deployment's secret.
	DeploymentEnvPrefix = "CARDFLOW_DEPLOYMENT_SECRET_"
)

// simpleOrganization is the common shape of organization ids (acme,
// org-1): lower-case letters and digits in groups joined by single hyphens.
var simpleOrganization = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// EnvName is the environment variable of a valid key:
//
//   - deployment secret "teams-signing": CARDFLOW_DEPLOYMENT_SECRET_TEAMS_SIGNING
//   - secret "sap-prod" of organization "acme": CARDFLOW_SECRET_ACME__SAP_PROD
//
// The name is written in capitals with every other character as "_", so
// "sap-prod" and "SAP_PROD" are one secret of the organization. The
// organization is written so that no two ids share a variable: an id of the
// common shape (acme, org-1) in capitals with "-" as "_"; any other (with
// capitals, "." or "_") as "_" and its bytes in hexadecimal. Neither form
// holds "__" or ends with "_", so the first "__" after the prefix always
// ends the organization, and no name can reach into another's variables.
func EnvName(k Key) string {
	if k.deployment {
		return DeploymentEnvPrefix + envWord(k.name)
	}
	org := "_" + strings.ToUpper(hex.EncodeToString([]byte(k.org)))
	if simpleOrganization.MatchString(k.org) {
		org = envWord(k.org)
	}
	return OrganizationEnvPrefix + org + "__" + envWord(k.name)
}

// envWord writes s in capitals, every character but letters and digits as
// "_".
func envWord(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, s)
}

// Env reads secrets from the environment variables EnvName names.
type Env struct {
	// Lookup reads a variable; nil means os.LookupEnv.
	Lookup func(string) (string, bool)
}

func (e Env) Get(_ context.Context, k Key) (string, error) {
	if err := k.Validate(); err != nil {
		return "", err
	}
	lookup := e.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if v, ok := lookup(EnvName(k)); ok && v != "" {
		return v, nil
	}
	return "", fmt.Errorf("%s is not set: %w", EnvName(k), ErrNotFound)
}

// Dir reads a secret from the file <Path>/<key path> (see Key.Path), without
// a trailing newline: <Path>/org/acme/sap-prod holds the secret "sap-prod"
// of organization acme, <Path>/deployment/teams-signing a deployment's.
type Dir struct{ Path string }

func (d Dir) Get(_ context.Context, k Key) (string, error) {
	if err := k.Validate(); err != nil {
		return "", err
	}
	file := filepath.Join(d.Path, filepath.FromSlash(k.Path()))
	b, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || isDirectory(file) {
			return "", fmt.Errorf("no file %s: %w", file, ErrNotFound)
		}
		// The path error names the file, never its content.
		return "", err
	}
	// On a file system that ignores case, org/Acme would open the files
	// of org/acme: the organization's directory must be spelled exactly.
	if !k.deployment && !hasEntry(filepath.Join(d.Path, "org"), k.org) {
		return "", fmt.Errorf("no directory named exactly %s in %s: %w", k.org, filepath.Join(d.Path, "org"), ErrNotFound)
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", fmt.Errorf("the file %s is empty: %w", file, ErrNotFound)
	}
	return v, nil
}

func isDirectory(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// hasEntry reports whether dir lists name, spelled exactly so.
func hasEntry(dir, name string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(entries, func(e os.DirEntry) bool { return e.Name() == name })
}

// Chain asks each store in turn and answers with the first that has the
// secret.
type Chain []Store

func (c Chain) Get(ctx context.Context, k Key) (string, error) {
	var msgs []string
	for _, s := range c {
		v, err := s.Get(ctx, k)
		if err == nil {
			return v, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return "", err
		}
		msgs = append(msgs, err.Error())
	}
	return "", fmt.Errorf("%s: %w", strings.Join(msgs, "; "), ErrNotFound)
}

// DefaultTTL is how long Cache keeps a value.
const DefaultTTL = 5 * time.Minute

// Cache keeps the values of a slower store (Secrets Manager) for a while,
// so a rotated secret is picked up within the TTL. Failures are not kept.
// Values are kept by key, namespace and all.
type Cache struct {
	src Store
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[Key]cached
}

type cached struct {
	value   string
	expires time.Time
}

// NewCache caches src's values for ttl (DefaultTTL when 0), reading the
// time from now (time.Now when nil).
func NewCache(src Store, ttl time.Duration, now func() time.Time) *Cache {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Cache{src: src, ttl: ttl, now: now, entries: map[Key]cached{}}
}

func (c *Cache) Get(ctx context.Context, k Key) (string, error) {
	c.mu.Lock()
	e, ok := c.entries[k]
	c.mu.Unlock()
	if ok && c.now().Before(e.expires) {
		return e.value, nil
	}
	v, err := c.src.Get(ctx, k)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.entries[k] = cached{value: v, expires: c.now().Add(c.ttl)}
	c.mu.Unlock()
	return v, nil
}

// ForOrganization is the secrets organization org's workflows name: the
// name "sap-prod" reads OrganizationKey(org, "sap-prod") and nothing else.
// A secret it cannot return (missing, badly named, or asked for by an
// organization id it cannot place) gets one message, `secret "sap-prod" is
// not available`, whatever other namespaces hold under that name.
func ForOrganization(st Store, org string) Source {
	return scoped{st: st, key: func(name string) Key { return OrganizationKey(org, name) }, what: "secret"}
}

// ForDeployment is the deployment's own secrets (the Teams signing key, the
// bot's client secret), named in its configuration and never by a
// workflow.
func ForDeployment(st Store) Source {
	return scoped{st: st, key: DeploymentKey, what: "deployment secret"}
}

type scoped struct {
	st   Store
	key  func(name string) Key
	what string
}

func (s scoped) Secret(ctx context.Context, name string) (string, error) {
	k := s.key(name)
	if k.Validate() != nil {
		return "", &unavailableError{what: s.what, name: name, cause: ErrNotFound}
	}
	v, err := s.st.Get(ctx, k)
	switch {
	case errors.Is(err, ErrNotFound):
		// The store's message says where it looked: not for the workflow.
		return "", &unavailableError{what: s.what, name: name, cause: ErrNotFound}
	case err != nil:
		return "", &unavailableError{what: s.what, name: name, cause: err, transient: true}
	}
	return v, nil
}

// unavailableError is a Source's answer for a secret it cannot return. Its
// message names the secret and nothing else: not where it is stored, nor
// whether a secret of that name exists in another namespace. It wraps
// ErrNotFound when no store has the secret; otherwise the store failed
// (Secrets Manager unreachable or refusing), which is worth a retry and
// whose cause stays out of the message but can be unwrapped.
type unavailableError struct {
	what, name string
	cause      error
	transient  bool
}

func (e *unavailableError) Error() string {
	if e.transient {
		return fmt.Sprintf("%s %q is not available right now", e.what, e.name)
	}
	return fmt.Sprintf("%s %q is not available", e.what, e.name)
}

func (e *unavailableError) Unwrap() error { return e.cause }
