package localrunner

import (
	"sync"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Changes hands the changes the engine and the service store to the
// requests that wait for them (waitForExecution), in process: the writer
// signals, the waiters wake. It implements cardflow.ExecutionNotifier and
// cardflow.ExecutionWatcher.
type Changes struct {
	mu       sync.Mutex
	watchers map[cardflow.ExecutionRef]map[chan struct{}]struct{}
	closed   bool
}

var (
	_ cardflow.ExecutionNotifier = (*Changes)(nil)
	_ cardflow.ExecutionWatcher  = (*Changes)(nil)
)

// NewChanges returns a Changes with no watchers.
func NewChanges() *Changes {
	return &Changes{watchers: map[cardflow.ExecutionRef]map[chan struct{}]struct{}{}}
}

// ExecutionChanged implements cardflow.ExecutionNotifier: every watcher of
// ref gets a signal, unless one is pending already. It never blocks the
// writer.
func (c *Changes) ExecutionChanged(ref cardflow.ExecutionRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ch := range c.watchers[ref] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Watch implements cardflow.ExecutionWatcher.
func (c *Changes) Watch(ref cardflow.ExecutionRef) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		close(ch)
		return ch, func() {}
	}
	set := c.watchers[ref]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		c.watchers[ref] = set
	}
	set[ch] = struct{}{}
	return ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		// After Close the channel is closed and gone from the map.
		if set, ok := c.watchers[ref]; ok {
			delete(set, ch)
			if len(set) == 0 {
				delete(c.watchers, ref)
			}
		}
	}
}

// Close ends every watch, so that waiting requests answer now (the server
// is shutting down) rather than hold its shutdown up; later watches end at
// once.
func (c *Changes) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, set := range c.watchers {
		for ch := range set {
			close(ch)
		}
	}
	clear(c.watchers)
}
