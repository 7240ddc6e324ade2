package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// keyPrefix starts every API key, so a leaked key is easy to recognise.
const keyPrefix = "cfk_"

// maxKeyLength bounds what Authenticate hashes.
const maxKeyLength = 128

// HashKey returns the hex SHA-256 of an API key, the only form stored.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// tenantIDPattern keeps organization ids free of the separators stores
// compose keys with ("#", NUL).
var tenantIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// CreateKeyInput describes a new API key. This is an operator action, not an
// API call, so it takes no principal.
type CreateKeyInput struct {
	OrganizationID string
	WorkspaceID    string
	Scopes         []string
	Name           string
	// Person is who the key acts for, optional: an Entra ID object id,
	// UPN or e-mail address. It answers approvals as them.
	Person string
}

// CreateKey makes a new API key and returns it with its record. The key is
// shown this once; only its hash is stored.
func (s *Admin) CreateKey(ctx context.Context, in CreateKeyInput) (string, *cardflow.APIKey, error) {
	org, ws := strings.TrimSpace(in.OrganizationID), strings.TrimSpace(in.WorkspaceID)
	if !tenantIDPattern.MatchString(org) || !tenantIDPattern.MatchString(ws) {
		return "", nil, cardflow.Errorf(cardflow.EINVALID, "organization and workspace ids are required: 1 to 64 letters, digits, . _ or -, starting with a letter or digit")
	}
	if len(in.Scopes) == 0 {
		return "", nil, cardflow.Errorf(cardflow.EINVALID, "at least one scope is required: read, execute or admin")
	}
	for _, sc := range in.Scopes {
		if _, err := cardflow.ParseScopes(sc); err != nil {
			return "", nil, err
		}
	}
	person := strings.TrimSpace(in.Person)
	if person != "" && !cardflow.IsPerson(person) {
		return "", nil, cardflow.Errorf(cardflow.EINVALID, "the key's person %q is neither an Entra ID object id nor a UPN or e-mail address", person)
	}
	var id [6]byte
	var secret [32]byte
	rand.Read(id[:])
	rand.Read(secret[:])
	keyID := hex.EncodeToString(id[:])
	key := keyPrefix + keyID + "_" + base64.RawURLEncoding.EncodeToString(secret[:])
	k := &cardflow.APIKey{
		KeyID:          keyID,
		Hash:           HashKey(key),
		Name:           strings.TrimSpace(in.Name),
		OrganizationID: org,
		WorkspaceID:    ws,
		Scopes:         in.Scopes,
		CreatedOn:      s.millis(),
		Person:         person,
	}
	if err := s.store.CreateAPIKey(ctx, k); err != nil {
		return "", nil, err
	}
	return key, k, nil
}

// ListKeys lists the keys of org, or of every organization when org is "".
func (s *Admin) ListKeys(ctx context.Context, org string) ([]*cardflow.APIKey, error) {
	return s.store.ListAPIKeys(ctx, org)
}

// RevokeKey revokes a key by its key id.
func (s *Admin) RevokeKey(ctx context.Context, keyID string) (*cardflow.APIKey, error) {
	return s.store.RevokeAPIKey(ctx, keyID, s.millis())
}

// Authenticate returns the principal of an API key.
func (s *Admin) Authenticate(ctx context.Context, key string) (*cardflow.Principal, error) {
	if key == "" {
		return nil, cardflow.Errorf(cardflow.EUNAUTHORIZED, "an API key is required in the x-api-key header")
	}
	if len(key) > maxKeyLength || !strings.HasPrefix(key, keyPrefix) {
		return nil, errBadKey
	}
	k, err := s.store.GetAPIKeyByHash(ctx, HashKey(key))
	if cardflow.ErrorCode(err) == cardflow.ENOTFOUND || (err == nil && k.RevokedOn != 0) {
		return nil, errBadKey
	}
	if err != nil {
		return nil, err
	}
	actor := "key:" + k.KeyID
	switch {
	case k.Person != "":
		// What the key does, its person does: created_by, overrides.
		actor = k.Person
	case k.Name != "":
		actor = k.Name
	}
	return &cardflow.Principal{OrganizationID: k.OrganizationID, WorkspaceID: k.WorkspaceID, Scopes: k.Scopes, Actor: actor, Person: k.Person, KeyID: k.KeyID}, nil
}

var errBadKey = cardflow.Errorf(cardflow.EUNAUTHORIZED, "the API key in x-api-key is not valid or has been revoked")
