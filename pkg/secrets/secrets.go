// Package secrets resolves secret references by name: from AWS Secrets
// Manager on AWS, from the environment or a directory of files locally.
// Errors name the secret, never its value.
package secrets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Source resolves a secret by name. It is the engine's Secrets port.
type Source interface {
	Secret(ctx context.Context, name string) (string, error)
}

// ErrNotFound is wrapped by the errors of a secret no source has. Its
// NotFound method lets a package tell such an error apart without
// importing this one and, with it, the Secrets Manager client.
var ErrNotFound error = notFound{}

type notFound struct{}

func (notFound) Error() string  { return "secret not found" }
func (notFound) NotFound() bool { return true }

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@+=/-]{0,255}$`)

// ValidName reports whether name can reference a secret: letters, digits and
// _ . @ + = / -, starting with a letter or digit (Secrets Manager's names).
func ValidName(name string) bool { return namePattern.MatchString(name) }

// EnvName is the environment variable of a secret: "sap-prod" reads
// CARDFLOW_SECRET_SAP_PROD.
func EnvName(name string) string {
	return "CARDFLOW_SECRET_" + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			return r
		}
		return '_'
	}, name)
}

// Env reads secrets from CARDFLOW_SECRET_<NAME> variables.
type Env struct {
	// Lookup reads a variable; nil means os.LookupEnv.
	Lookup func(string) (string, bool)
}

func (e Env) Secret(_ context.Context, name string) (string, error) {
	if !ValidName(name) {
		return "", fmt.Errorf("%q is not a secret name", name)
	}
	lookup := e.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if v, ok := lookup(EnvName(name)); ok && v != "" {
		return v, nil
	}
	return "", fmt.Errorf("secret %q is not set (set %s): %w", name, EnvName(name), ErrNotFound)
}

// Dir reads the secret "sap-prod" from the file <Path>/sap-prod, without a
// trailing newline. Names with a slash are looked up in subdirectories.
type Dir struct{ Path string }

func (d Dir) Secret(_ context.Context, name string) (string, error) {
	if !ValidName(name) || strings.Contains(name, "..") {
		return "", fmt.Errorf("%q is not a secret name", name)
	}
	b, err := os.ReadFile(filepath.Join(d.Path, filepath.FromSlash(name)))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("secret %q is not set (no file %s): %w", name, filepath.Join(d.Path, name), ErrNotFound)
	}
	if err != nil {
		// The path error names the file, never its content.
		return "", fmt.Errorf("secret %q: %w", name, err)
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", fmt.Errorf("secret %q: the file %s is empty: %w", name, filepath.Join(d.Path, name), ErrNotFound)
	}
	return v, nil
}

// Chain asks each source in turn and answers with the first that has the
// secret.
type Chain []Source

func (c Chain) Secret(ctx context.Context, name string) (string, error) {
	var msgs []string
	for _, s := range c {
		v, err := s.Secret(ctx, name)
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

// Cache keeps the values of a slower source (Secrets Manager) for a while,
// so a rotated secret is picked up within the TTL. Failures are not kept.
type Cache struct {
	src Source
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]cached
}

type cached struct {
	value   string
	expires time.Time
}

// NewCache caches src's values for ttl (DefaultTTL when 0), reading the
// time from now (time.Now when nil).
func NewCache(src Source, ttl time.Duration, now func() time.Time) *Cache {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Cache{src: src, ttl: ttl, now: now, entries: map[string]cached{}}
}

func (c *Cache) Secret(ctx context.Context, name string) (string, error) {
	c.mu.Lock()
	e, ok := c.entries[name]
	c.mu.Unlock()
	if ok && c.now().Before(e.expires) {
		return e.value, nil
	}
	v, err := c.src.Secret(ctx, name)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	c.entries[name] = cached{value: v, expires: c.now().Add(c.ttl)}
	c.mu.Unlock()
	return v, nil
}
