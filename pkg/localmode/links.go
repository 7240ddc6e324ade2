package localmode

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/cardflow/cardflow/pkg/secrets"
)

// LinkKeyFile holds, in the data directory, the key that signs response
// links when no signing secret is configured.
const LinkKeyFile = "teams-signing-key"

// localLinkSecret names that key among the deployment's secrets.
const localLinkSecret = "local-response-links"

// withLocalLinks makes a server without a Teams signing secret sign
// response links with a key of its data directory, made on first start
// (mode 0600, like the demo key), and reach them at url unless a public
// URL is set: the personal links an admin gets with `cardflow links`
// then work against this server. A configured signing secret is left
// alone.
func withLocalLinks(cfg Config, url string) (Config, error) {
	if cfg.Teams.SigningSecret != "" {
		return cfg, nil
	}
	path := filepath.Join(cfg.DataDir, LinkKeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		var k [32]byte
		rand.Read(k[:])
		b = []byte(base64.RawURLEncoding.EncodeToString(k[:]))
		err = os.WriteFile(path, append(b, '\n'), 0o600)
	}
	if err != nil {
		return cfg, err
	}
	base := cfg.Secrets
	if base == nil {
		if _, base, err = integrations(); err != nil {
			return cfg, err
		}
	}
	cfg.Secrets = linkKey{Store: base, key: strings.TrimSpace(string(b))}
	cfg.Teams.SigningSecret = localLinkSecret
	if cfg.Teams.PublicURL == "" {
		cfg.Teams.PublicURL = url
	}
	return cfg, nil
}

// linkKey answers the local link key by its name, and every other secret
// from Store.
type linkKey struct {
	secrets.Store
	key string
}

func (l linkKey) Get(ctx context.Context, k secrets.Key) (string, error) {
	if k == secrets.DeploymentKey(localLinkSecret) {
		return l.key, nil
	}
	return l.Store.Get(ctx, k)
}
