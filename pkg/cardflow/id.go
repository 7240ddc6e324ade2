package cardflow

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

var (
	idMu      sync.Mutex
	idEntropy = ulid.Monotonic(rand.Reader, 0)
)

// NewID returns a new ULID: time-ordered, so key order is creation order
// (strictly increasing within a process, even within one millisecond), with
// 80 random bits, so ids cannot be guessed.
func NewID(now time.Time) string {
	idMu.Lock()
	defer idMu.Unlock()
	return ulid.MustNew(ulid.Timestamp(now), idEntropy).String()
}
