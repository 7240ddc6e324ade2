// Package teamstest stands in for Microsoft's side of Teams in tests: one
// HTTPS server speaking the real wire formats of a Teams Workflows webhook,
// the Bot Framework's OAuth2 token endpoint, its OpenID metadata and JWKS,
// and the Bot Connector REST API, plus a signer of Bot Framework JWTs.
package teamstest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Identity of the fake bot.
const (
	AppID     = "00000000-0000-0000-0000-00000000b07"
	AppSecret = "bot-client-secret-value"
	Issuer    = "https://api.botframework.com"
	KeyID     = "test-key-1"
)

// Request is a request one of the fake endpoints received.
type Request struct {
	Method, Path  string
	Authorization string
	Body          map[string]any
	// Raw is the body as received.
	Raw []byte
}

// Server is the fake. Its endpoints: /openid (metadata), /keys (JWKS),
// /token, /connector/v3/conversations/{id}/activities[/{activity id}],
// /webhook and /webhook/{name} (a webhook of its own per name).
type Server struct {
	*httptest.Server
	Key *rsa.PrivateKey

	mu sync.Mutex
	// WebhookStatus and ConnectorStatus, when set, are what those
	// endpoints answer instead of success.
	WebhookStatus, ConnectorStatus int
	requests                       []Request
	tokens                         []string
	keyFetches                     int
}

// New starts the fake; it stops when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Key: key}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// URLs of the endpoints.
func (s *Server) MetadataURL() string { return s.URL + "/openid" }
func (s *Server) TokenURL() string    { return s.URL + "/token" }
func (s *Server) ServiceURL() string  { return s.URL + "/connector/" }
func (s *Server) WebhookURL() string  { return s.URL + "/webhook?sig=secret-signature" }

// WebhookURLFor is the URL of a webhook of its own, e.g. one that posts to
// one person's chat; Requests("/webhook/"+name) reads what it received.
func (s *Server) WebhookURLFor(name string) string {
	return s.URL + "/webhook/" + name + "?sig=secret-signature"
}

// Host is the server's host name, for the allowed service hosts.
func (s *Server) Host() string { return strings.Split(strings.TrimPrefix(s.URL, "https://"), ":")[0] }

// Requests returns the requests received on paths starting with prefix.
func (s *Server) Requests(prefix string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if strings.HasPrefix(r.Path, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// TokensIssued counts the access tokens the token endpoint issued.
func (s *Server) TokensIssued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tokens)
}

// KeyFetches counts the JWKS fetches.
func (s *Server) KeyFetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keyFetches
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	req := Request{Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization"), Raw: raw}
	_ = json.Unmarshal(raw, &req.Body) // Raw keeps a body that is no JSON
	switch {
	case r.URL.Path == "/openid":
		writeJSON(w, 200, map[string]any{"issuer": Issuer, "jwks_uri": s.URL + "/keys", "id_token_signing_alg_values_supported": []string{"RS256"}})
	case r.URL.Path == "/keys":
		s.keyFetches++
		writeJSON(w, 200, map[string]any{"keys": []any{JWK(&s.Key.PublicKey, KeyID, "msteams")}})
	case r.URL.Path == "/token":
		s.token(w, r, raw)
	case strings.HasPrefix(r.URL.Path, "/connector/v3/conversations/"):
		s.requests = append(s.requests, req)
		if len(s.tokens) == 0 || req.Authorization != "Bearer "+s.tokens[len(s.tokens)-1] {
			writeJSON(w, 401, map[string]any{"error": map[string]any{"code": "Unauthorized", "message": "Authorization has been denied for this request."}})
			return
		}
		if s.ConnectorStatus != 0 {
			writeJSON(w, s.ConnectorStatus, map[string]any{"error": map[string]any{"code": "BadArgument", "message": "conversation not found"}})
			return
		}
		if r.Method == http.MethodPut {
			writeJSON(w, 200, map[string]any{"id": r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]})
			return
		}
		writeJSON(w, 201, map[string]any{"id": fmt.Sprintf("activity-%d", len(s.requests))})
	case r.URL.Path == "/webhook" || strings.HasPrefix(r.URL.Path, "/webhook/"):
		s.requests = append(s.requests, req)
		if s.WebhookStatus != 0 {
			writeJSON(w, s.WebhookStatus, map[string]any{"error": map[string]any{"code": "TriggerInputSchemaMismatch", "message": "The input body for trigger 'manual' of type 'Request' did not match its schema definition."}})
			return
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		http.NotFound(w, r)
	}
}

// token is the client credentials grant of the Microsoft identity platform.
func (s *Server) token(w http.ResponseWriter, r *http.Request, raw []byte) {
	form, _ := parseForm(raw)
	if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || form["grant_type"] != "client_credentials" || form["scope"] != "https://api.botframework.com/.default" {
		writeJSON(w, 400, map[string]any{"error": "invalid_request", "error_description": "AADSTS900144: The request body must contain the following parameter: 'grant_type'."})
		return
	}
	if form["client_id"] != AppID || form["client_secret"] != AppSecret {
		writeJSON(w, 401, map[string]any{"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided."})
		return
	}
	tok := fmt.Sprintf("access-token-%d", len(s.tokens)+1)
	s.tokens = append(s.tokens, tok)
	writeJSON(w, 200, map[string]any{"token_type": "Bearer", "expires_in": 3599, "ext_expires_in": 3599, "access_token": tok})
}

func parseForm(raw []byte) (map[string]string, error) {
	out := map[string]string{}
	r, err := http.NewRequest("POST", "/", strings.NewReader(string(raw)))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	for k := range r.PostForm {
		out[k] = r.PostForm.Get(k)
	}
	return out, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// JWK is the JSON Web Key of pub, as Bot Framework publishes its keys.
func JWK(pub *rsa.PublicKey, kid string, endorsements ...string) map[string]any {
	return map[string]any{
		"kty": "RSA", "use": "sig", "kid": kid,
		"n":            base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		"e":            base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
		"endorsements": endorsements,
	}
}

// Claims returns the claims of a valid token for the bot, sent through
// serviceURL, issued at now.
func Claims(now time.Time, serviceURL string) map[string]any {
	return map[string]any{
		"iss": Issuer, "aud": AppID, "serviceurl": serviceURL,
		"nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
	}
}

// Sign returns a JWT with claims signed by key under kid, with header alg
// alg (RS256 signs for real; anything else leaves the signature empty).
func Sign(t testing.TB, key *rsa.PrivateKey, kid, alg string, claims map[string]any) string {
	t.Helper()
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signing := enc(map[string]any{"alg": alg, "typ": "JWT", "kid": kid}) + "." + enc(claims)
	if alg != "RS256" {
		return signing + "."
	}
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return signing + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// Token is a valid token from the fake's key.
func (s *Server) Token(t testing.TB, now time.Time, serviceURL string) string {
	return Sign(t, s.Key, KeyID, "RS256", Claims(now, serviceURL))
}
