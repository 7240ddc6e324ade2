package cardflow

import (
	"crypto/rand"
	"time"

	"github.com/oklog/ulid/v2"
)

// NewID returns a new ULID: time-ordered, so key order is creation order,
// with 80 random bits, so ids cannot be guessed.
func NewID(now time.Time) string {
	return ulid.MustNew(ulid.Timestamp(now), rand.Reader).String()
}
