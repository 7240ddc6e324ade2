package cardflow_test

import (
	"math/big"
	"slices"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestNewIDRandomness makes many ids in one millisecond: each has fresh
// random bits, so none lies within 2^32 of the id made before it (a
// monotonic source adds less than 2^32 to the previous id, which makes
// neighbours guessable).
func TestNewIDRandomness(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1_767_225_600_000)
	const n = 2000
	near := new(big.Int).Lsh(big.NewInt(1), 32)
	var ids []string
	var prev *big.Int
	for i := range n {
		id := cardflow.NewID(now)
		u, err := ulid.ParseStrict(id)
		if err != nil {
			t.Fatalf("NewID: got %q, not a ULID: %v", id, err)
		}
		if got, want := u.Time(), uint64(now.UnixMilli()); got != want {
			t.Fatalf("NewID: got time %d, want %d", got, want)
		}
		random := new(big.Int).SetBytes(u.Entropy())
		if prev != nil {
			if d := new(big.Int).Sub(random, prev); d.Abs(d).Cmp(near) < 0 {
				t.Fatalf("id %d: random part %s is within 2^32 of the previous id's %s", i, random, prev)
			}
		}
		prev = random
		ids = append(ids, id)
	}
	if slices.IsSorted(ids) {
		t.Errorf("got %d ids of one millisecond in increasing order, want them in no particular order", n)
	}
	slices.Sort(ids)
	if len(slices.Compact(ids)) != n {
		t.Errorf("got duplicate ids among %d", n)
	}
}

// TestNewIDTimeOrder checks that ids sort by their millisecond.
func TestNewIDTimeOrder(t *testing.T) {
	t.Parallel()
	start := time.UnixMilli(1_767_225_600_000)
	for i := range 1000 {
		earlier, later := cardflow.NewID(start.Add(time.Duration(i)*time.Millisecond)), cardflow.NewID(start.Add(time.Duration(i+1)*time.Millisecond))
		if earlier >= later {
			t.Fatalf("got %s for a millisecond and %s for the next, want the later id to sort after", earlier, later)
		}
	}
}
