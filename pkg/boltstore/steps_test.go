package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/cardflow/cardflow/internal/storetest"
	"github.com/cardflow/cardflow/pkg/boltstore"
)

// TestBytesPerStep measures what each step of a 190-step execution with a
// 60 KB input writes to the file (pages allocated): it must not grow with
// the steps before it. Run with -v for the figures BENCHMARKS.md gives.
func TestBytesPerStep(t *testing.T) {
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	perStep := storetest.MeasureSteps(t, s, func() int64 { return boltstore.PagesWritten(s) })
	total := int64(0)
	for _, n := range perStep {
		total += n
	}
	t.Logf("all %d steps: %d bytes", len(perStep), total)
	for _, i := range []int{1, 10, 100, 190} {
		t.Logf("step %3d wrote %6d bytes of pages", i, perStep[i-1])
	}
	// A page of 4 KB either way for each of the buckets a step writes.
	storetest.CheckStepWrites(t, perStep, 6*4096)
}
