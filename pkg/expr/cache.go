package expr

import (
	"container/list"
	"sync"
)

// cache keeps the most recently used compiled programs by source.
type cache struct {
	mu    sync.Mutex
	limit int
	order *list.List // of *cacheEntry, most recently used first
	byKey map[string]*list.Element
}

type cacheEntry struct {
	src string
	prg *Program
}

func newCache(limit int) *cache {
	return &cache{limit: limit, order: list.New(), byKey: make(map[string]*list.Element, limit)}
}

func (c *cache) get(src string) (*Program, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[src]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).prg, true
}

func (c *cache) add(src string, p *Program) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[src]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.byKey[src] = c.order.PushFront(&cacheEntry{src: src, prg: p})
	if c.order.Len() > c.limit {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.byKey, oldest.Value.(*cacheEntry).src)
	}
}
