package cardflow_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// A value of shared parts is encoded until the limit, not whole: a list
// that refers to one 1 KB map a million times is 1 GB as JSON.
func TestMarshalWithinStopsAtTheLimit(t *testing.T) {
	shared := map[string]any{"s": strings.Repeat("a", 1000)}
	list := make([]any, 1_000_000)
	for i := range list {
		list[i] = shared
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b, over, err := cardflow.MarshalWithin(list, 64<<10)
	runtime.ReadMemStats(&after)
	if err != nil || !over || b != nil {
		t.Fatalf("got %d bytes, over %v, error %v; want over", len(b), over, err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("allocated %d bytes, want at most 4 MB", n)
	}
}

// Within the limit it writes what encoding/json writes.
func TestMarshalWithinWritesAsEncodingJSON(t *testing.T) {
	t.Parallel()
	tests := []any{
		nil, "x<&>\u2028", 1.5, int64(3), []any{}, map[string]any{"b": 1.0, "a": []any{"x", nil, true}},
		map[string]any{"error": "a", "step": "b"},
	}
	for _, v := range tests {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, over, err := cardflow.MarshalWithin(v, len(want))
		if err != nil || over || string(got) != string(want) {
			t.Errorf("MarshalWithin(%v): got %s, %v, %v, want %s", v, got, over, err, want)
		}
		if _, over, _ := cardflow.MarshalWithin(v, len(want)-1); !over {
			t.Errorf("MarshalWithin(%v) one byte short: got not over, want over", v)
		}
	}
}
