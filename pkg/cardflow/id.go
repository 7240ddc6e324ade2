package cardflow

import (
	"crypto/rand"
	"time"

	"github.com/oklog/ulid/v2"
)

// NewID returns a new ULID: its first 48 bits are the millisecond of now,
// so ids sort by creation time to the millisecond, and its other 80 bits
// come fresh from crypto/rand for each id, so knowing one id does not help
// guess another, not even one made in the same millisecond. Ids made
// within one millisecond are in no particular order.
func NewID(now time.Time) string {
	return ulid.MustNew(ulid.Timestamp(now), rand.Reader).String()
}
