package cardflow

import (
	"context"
	"slices"
	"strings"
)

// Scopes an API key can carry.
const (
	ScopeRead    = "read"
	ScopeExecute = "execute"
	ScopeAdmin   = "admin"
)

// AllScopes lists every scope, in the order they are documented.
var AllScopes = []string{ScopeRead, ScopeExecute, ScopeAdmin}

// ParseScopes reads a comma-separated scope list and rejects unknown names.
func ParseScopes(s string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if !slices.Contains(AllScopes, part) {
			return nil, Errorf(EINVALID, "unknown scope %q: use read, execute or admin", part)
		}
		if !slices.Contains(out, part) {
			out = append(out, part)
		}
	}
	if len(out) == 0 {
		return nil, Errorf(EINVALID, "at least one scope is required: read, execute or admin")
	}
	return out, nil
}

// APIKey is a stored API key. The key itself is never stored, only the
// SHA-256 hash of it; KeyID is a public handle for listing and revoking.
type APIKey struct {
	KeyID          string   `json:"key_id"`
	Hash           string   `json:"hash"`
	Name           string   `json:"name,omitempty"`
	OrganizationID string   `json:"organization_id"`
	WorkspaceID    string   `json:"workspace_id"`
	Scopes         []string `json:"scopes"`
	CreatedOn      int64    `json:"created_on"`
	RevokedOn      int64    `json:"revoked_on,omitempty"`
	// Person is who the key acts for, when it names one (an Entra ID
	// object id, UPN or e-mail address): it answers approvals as them.
	Person string `json:"person,omitempty"`
}

// Principal is who a request acts for.
type Principal struct {
	OrganizationID string
	WorkspaceID    string
	Scopes         []string
	// Actor names the caller in created_by / modified_by.
	Actor string
	// Person is the person the key acts for; "" when it names none.
	Person string
	// KeyID is the id of the API key the request came with; "" for the
	// service's own principals (schedules, bulk operations, bots).
	KeyID string
}

// Requester is who an execution this principal starts records as having
// asked for it (Execution.TriggeredBy), which forbid_self_approval
// refuses: the key's person, else the key itself. A key's name is not an
// identity (an admin may name a key anything), and neither is the
// templated actor of the service's own principals.
func (p *Principal) Requester() string {
	switch {
	case p.Person != "":
		return p.Person
	case p.KeyID != "":
		return "key:" + p.KeyID
	}
	return p.Actor
}

// Has reports whether the principal holds scope.
func (p *Principal) Has(scope string) bool { return slices.Contains(p.Scopes, scope) }

type principalKey struct{}

// NewContextWithPrincipal returns ctx carrying p.
func NewContextWithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFromContext returns the principal of ctx, or nil.
func PrincipalFromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
