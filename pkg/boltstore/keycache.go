package boltstore

import (
	"slices"
	"sync"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// keyCache holds the API keys read, by hash, so that a request's key check
// does not open a read transaction and decode the key. The copy stays true
// because only this Store writes the file (Open holds its lock) and the
// only change of a stored key is its revocation, which drops it. A read
// puts what it found only if no revocation happened since it began
// (generation), so a read that saw the key before a revocation committed
// cannot put it back unrevoked. Keys that are not found are not kept, so
// guessed keys take no memory.
type keyCache struct {
	mu     sync.RWMutex
	byHash map[string]*cardflow.APIKey
	gen    uint64
}

func (c *keyCache) get(hash string) (*cardflow.APIKey, bool) {
	c.mu.RLock()
	k, ok := c.byHash[hash]
	c.mu.RUnlock()
	if !ok {
		return nil, false
	}
	return cloneKey(k), true
}

func (c *keyCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// put keeps a copy of k, read when the generation was gen.
func (c *keyCache) put(hash string, k *cardflow.APIKey, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.byHash[hash] = cloneKey(k)
	}
}

func (c *keyCache) drop(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.byHash, hash)
	c.gen++
}

// cloneKey copies k, so callers cannot change the cached key.
func cloneKey(k *cardflow.APIKey) *cardflow.APIKey {
	c := *k
	c.Scopes = slices.Clone(k.Scopes)
	return &c
}
