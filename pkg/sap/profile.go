// Package sap calls SAP systems over OData V2 and V4 through a workflow's
// ERP integration profile: sap-client, basic or OAuth 2.0 client credentials
// auth from secrets, the CSRF token handshake for modifying calls, readable
// OData errors and unwrapped results.
package sap

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/cardflow/cardflow/pkg/secrets"
)

// OData versions.
const (
	V2 = "V2"
	V4 = "V4"
)

// Auth types.
const (
	AuthBasic  = "basic"
	AuthOAuth2 = "oauth2"
)

// Profile is workflow_integrations.erp: how to reach one SAP system.
type Profile struct {
	BaseURL string
	// Client is the SAP client (Mandant), sent as sap-client; "" for the
	// system's default.
	Client       string
	ODataVersion string
	Auth         Auth
}

// Auth names the secret that authenticates the calls. For basic auth the
// secret holds "user:password" (or {"username", "password"}); for oauth2
// "client_id:client_secret" (or {"client_id", "client_secret"}), exchanged
// at TokenURL with the client credentials grant.
type Auth struct {
	Type     string
	Secret   string
	TokenURL string
	Scope    string
}

var clientPattern = regexp.MustCompile(`^[0-9]{3}$`)

const where = "workflow_integrations.erp"

// ParseProfile reads and checks workflow_integrations.erp; its errors name
// the field at fault.
func ParseProfile(v any) (*Profile, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an object with type, base_url and auth", where)
	}
	known := map[string]bool{"type": true, "base_url": true, "client": true, "odata_version": true, "auth": true}
	for k := range m {
		if !known[k] {
			return nil, fmt.Errorf("%s.%s is not a profile field; use type, base_url, client, odata_version and auth", where, k)
		}
	}
	str := func(m map[string]any, path, key string) (string, error) {
		switch s := m[key].(type) {
		case nil:
			return "", nil
		case string:
			return strings.TrimSpace(s), nil
		default:
			return "", fmt.Errorf("%s.%s must be a string", path, key)
		}
	}
	typ, err := str(m, where, "type")
	if err != nil {
		return nil, err
	}
	if typ != "SAP" {
		return nil, fmt.Errorf("%s.type must be SAP, not %q", where, typ)
	}
	p := &Profile{}
	if p.BaseURL, err = str(m, where, "base_url"); err != nil {
		return nil, err
	}
	if err := checkURL(where+".base_url", p.BaseURL); err != nil {
		return nil, err
	}
	p.BaseURL = strings.TrimRight(p.BaseURL, "/")
	if _, isNum := m["client"].(float64); isNum {
		return nil, fmt.Errorf("%s.client must be a string of three digits such as \"100\" (a number loses leading zeros)", where)
	}
	if p.Client, err = str(m, where, "client"); err != nil {
		return nil, err
	}
	if p.Client != "" && !clientPattern.MatchString(p.Client) {
		return nil, fmt.Errorf("%s.client %q must be three digits, such as \"100\"", where, p.Client)
	}
	if p.ODataVersion, err = str(m, where, "odata_version"); err != nil {
		return nil, err
	}
	switch strings.ToUpper(p.ODataVersion) {
	case "", V2:
		p.ODataVersion = V2
	case V4:
		p.ODataVersion = V4
	default:
		return nil, fmt.Errorf("%s.odata_version must be V2 or V4, not %q", where, p.ODataVersion)
	}
	auth, ok := m["auth"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s.auth is required: {\"type\": \"basic\" or \"oauth2\", \"secret\": \"<secret name>\"}", where)
	}
	aw := where + ".auth"
	for k := range auth {
		if k != "type" && k != "secret" && k != "token_url" && k != "scope" {
			return nil, fmt.Errorf("%s.%s is not an auth field; use type, secret, token_url and scope", aw, k)
		}
	}
	if p.Auth.Type, err = str(auth, aw, "type"); err != nil {
		return nil, err
	}
	if p.Auth.Secret, err = str(auth, aw, "secret"); err != nil {
		return nil, err
	}
	if !secrets.ValidName(p.Auth.Secret) {
		return nil, fmt.Errorf("%s.secret must name a secret (letters, digits and _ . @ + = / -), not hold one", aw)
	}
	if p.Auth.TokenURL, err = str(auth, aw, "token_url"); err != nil {
		return nil, err
	}
	if p.Auth.Scope, err = str(auth, aw, "scope"); err != nil {
		return nil, err
	}
	switch p.Auth.Type {
	case AuthBasic:
		if p.Auth.TokenURL != "" || p.Auth.Scope != "" {
			return nil, fmt.Errorf("%s: token_url and scope belong to oauth2, not basic auth", aw)
		}
	case AuthOAuth2:
		if p.Auth.TokenURL == "" {
			return nil, fmt.Errorf("%s.token_url is required for oauth2 (the client credentials token endpoint)", aw)
		}
		if err := checkURL(aw+".token_url", p.Auth.TokenURL); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%s.type must be basic or oauth2, not %q", aw, p.Auth.Type)
	}
	return p, nil
}

func checkURL(field, s string) error {
	if s == "" {
		return fmt.Errorf("%s is required", field)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%s %q must be an http or https URL such as https://sap.example.com", field, s)
	}
	if u.User != nil {
		return fmt.Errorf("%s must not hold credentials; name a secret in auth.secret", field)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%s %q must have no query or fragment", field, s)
	}
	return nil
}
