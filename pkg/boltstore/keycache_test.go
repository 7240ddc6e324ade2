package boltstore

import (
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// A read that began before a revocation does not put the key back
// unrevoked; callers get copies.
func TestKeyCache(t *testing.T) {
	c := keyCache{byHash: map[string]*cardflow.APIKey{}}
	gen := c.generation()
	c.drop("h") // a revocation commits while the read runs
	c.put("h", &cardflow.APIKey{Hash: "h", Scopes: []string{"read"}}, gen)
	if k, ok := c.get("h"); ok {
		t.Errorf("got %+v cached, want nothing: the read began before the revocation", k)
	}
	c.put("h", &cardflow.APIKey{Hash: "h", Scopes: []string{"read"}}, c.generation())
	k, ok := c.get("h")
	if !ok {
		t.Fatal("got nothing cached, want the key")
	}
	k.Scopes[0] = "admin"
	if again, _ := c.get("h"); again.Scopes[0] != "read" {
		t.Errorf("got scopes %q after a caller changed its copy, want [read]", again.Scopes)
	}
}
