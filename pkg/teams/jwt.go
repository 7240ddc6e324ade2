package teams

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Bot Framework's token validation defaults, for tokens the Bot Connector
// sends to a bot's messaging endpoint.
const (
	DefaultOpenIDMetadataURL = "https://login.botframework.com/v1/.well-known/openidconfiguration"
	DefaultIssuer            = "https://api.botframework.com"
	// channel is the Bot Framework channel of Microsoft Teams: a signing
	// key that lists endorsements must endorse it.
	channel = "msteams"
	// DefaultSkew is the clock skew allowed on exp and nbf.
	DefaultSkew = 5 * time.Minute
	// keysTTL is how long fetched signing keys are used before they are
	// fetched again; Bot Framework rotates them at most daily.
	keysTTL = 24 * time.Hour
	// refetchPause keeps a stream of unknown key ids from hammering the
	// metadata endpoint.
	refetchPause = time.Minute
)

// Claims are the checked claims of a Bot Framework token.
type Claims struct {
	// ServiceURL is the Bot Connector the token was issued for, never
	// empty; the activity must name the same.
	ServiceURL string
	// Endorsements are the channels the signing key may sign for; when
	// there are any, msteams is one of them.
	Endorsements []string
}

// Verifier checks the JWTs the Bot Connector sends, as Bot Framework's
// authentication spec asks of tokens from a channel: RS256, signed by a key
// from the OpenID metadata's jwks_uri that endorses msteams when it lists
// endorsements, with the right issuer, the bot's app id as audience, a
// serviceurl claim, and not expired.
type Verifier struct {
	metadataURL, issuer, audience string
	client                        *http.Client
	now                           func() time.Time
	skew                          time.Duration

	mu      sync.Mutex
	keys    map[string]signingKey
	fetched time.Time
}

type signingKey struct {
	key          *rsa.PublicKey
	endorsements []string
}

// NewVerifier returns a verifier of tokens for the bot appID. Empty
// metadataURL and issuer take Bot Framework's.
func NewVerifier(metadataURL, issuer, appID string, client *http.Client, now func() time.Time) (*Verifier, error) {
	if appID == "" || client == nil || now == nil {
		return nil, errors.New("teams: a verifier needs the bot's app id, an HTTP client and a clock")
	}
	if metadataURL == "" {
		metadataURL = DefaultOpenIDMetadataURL
	}
	if issuer == "" {
		issuer = DefaultIssuer
	}
	return &Verifier{metadataURL: metadataURL, issuer: issuer, audience: appID, client: client, now: now, skew: DefaultSkew}, nil
}

func unauthorized(format string, args ...any) error {
	return cardflow.Errorf(cardflow.EUNAUTHORIZED, "Bot Framework token: "+format, args...)
}

// Verify checks the Authorization header of a request from the Bot
// Connector and returns the token's claims.
func (v *Verifier) Verify(ctx context.Context, authorization string) (*Claims, error) {
	raw, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok || raw == "" {
		return nil, unauthorized("the Authorization header must carry Bearer <token>")
	}
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return nil, unauthorized("not a JWT")
	}
	var header struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	if err := decodeSegment(parts[0], &header); err != nil {
		return nil, unauthorized("its header is not base64url JSON")
	}
	if header.Alg != "RS256" {
		return nil, unauthorized("alg %q is not RS256", header.Alg)
	}
	key, err := v.key(ctx, header.Kid)
	if err != nil {
		return nil, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return nil, unauthorized("its signature is not base64url")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(key.key, crypto.SHA256, sum[:], sig); err != nil {
		return nil, unauthorized("the signature does not verify")
	}
	var c struct {
		Iss        string          `json:"iss"`
		Aud        json.RawMessage `json:"aud"`
		Exp        *float64        `json:"exp"`
		Nbf        *float64        `json:"nbf"`
		ServiceURL string          `json:"serviceurl"`
	}
	if err := decodeSegment(parts[1], &c); err != nil {
		return nil, unauthorized("its claims are not base64url JSON")
	}
	if c.Iss != v.issuer {
		return nil, unauthorized("issuer %q is not %q", c.Iss, v.issuer)
	}
	if !audienceHas(c.Aud, v.audience) {
		return nil, unauthorized("its audience is not this bot's app id")
	}
	now := v.now()
	if c.Exp == nil {
		return nil, unauthorized("it has no expiry")
	}
	if exp := time.Unix(int64(*c.Exp), 0); !now.Before(exp.Add(v.skew)) {
		return nil, unauthorized("it expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if c.Nbf != nil {
		if nbf := time.Unix(int64(*c.Nbf), 0); now.Add(v.skew).Before(nbf) {
			return nil, unauthorized("it is not valid before %s", nbf.UTC().Format(time.RFC3339))
		}
	}
	// The activity's serviceUrl is checked against this claim, so a token
	// without one could send replies anywhere.
	if c.ServiceURL == "" {
		return nil, unauthorized("it has no serviceurl claim")
	}
	if len(key.endorsements) > 0 && !slices.Contains(key.endorsements, channel) {
		return nil, unauthorized("its signing key does not endorse channel %q", channel)
	}
	return &Claims{ServiceURL: c.ServiceURL, Endorsements: key.endorsements}, nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// audienceHas reads aud, a string or a list of strings.
func audienceHas(raw json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == want
	}
	var many []string
	return json.Unmarshal(raw, &many) == nil && slices.Contains(many, want)
}

// key returns the signing key kid, fetching the keys when they are older
// than keysTTL or kid is new to them.
func (v *Verifier) key(ctx context.Context, kid string) (signingKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	k, ok := v.keys[kid]
	stale := now.Sub(v.fetched) >= keysTTL
	if ok && !stale {
		return k, nil
	}
	if stale || now.Sub(v.fetched) >= refetchPause {
		keys, err := v.fetchKeys(ctx)
		if err != nil {
			if ok {
				return k, nil // keep using a known key while the endpoint is down
			}
			return signingKey{}, cardflow.Errorf(cardflow.EUNAVAILABLE, "the Bot Framework signing keys cannot be fetched: %v", err)
		}
		v.keys, v.fetched = keys, now
		k, ok = keys[kid]
	}
	if !ok {
		return signingKey{}, unauthorized("signing key %q is not one of the Bot Framework's keys", kid)
	}
	return k, nil
}

// fetchKeys reads the OpenID metadata, then its jwks_uri.
func (v *Verifier) fetchKeys(ctx context.Context) (map[string]signingKey, error) {
	var meta struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := v.getJSON(ctx, v.metadataURL, &meta); err != nil {
		return nil, fmt.Errorf("OpenID metadata: %w", err)
	}
	if meta.JWKSURI == "" {
		return nil, errors.New("OpenID metadata without jwks_uri")
	}
	var set struct {
		Keys []struct {
			Kty          string   `json:"kty"`
			Kid          string   `json:"kid"`
			N            string   `json:"n"`
			E            string   `json:"e"`
			Endorsements []string `json:"endorsements"`
		} `json:"keys"`
	}
	if err := v.getJSON(ctx, meta.JWKSURI, &set); err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	keys := map[string]signingKey{}
	for _, k := range set.Keys {
		if k.Kty != "RSA" {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			continue
		}
		exp := new(big.Int).SetBytes(e).Int64()
		keys[k.Kid] = signingKey{key: &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(exp)}, endorsements: k.Endorsements}
	}
	return keys, nil
}

func (v *Verifier) getJSON(ctx context.Context, target string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	status, body, err := do(v.client, req)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return fmt.Errorf("%d %s", status, http.StatusText(status))
	}
	return json.Unmarshal(body, out)
}
