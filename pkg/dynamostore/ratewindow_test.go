package dynamostore

import (
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func TestRateWindow(t *testing.T) {
	for _, c := range []struct {
		l       cardflow.Limits
		window  time.Duration
		allowed int
	}{
		{cardflow.Limits{RatePerSecond: 50, Burst: 100}, 2 * time.Second, 100},
		{cardflow.Limits{RatePerSecond: 50}, time.Second, 50},
		{cardflow.Limits{RatePerSecond: 50, Burst: 10}, time.Second, 50},
		{cardflow.Limits{RatePerSecond: 2, Burst: 5}, 3 * time.Second, 6},
		{cardflow.Limits{RatePerSecond: 0.0003, Burst: 3}, 10000 * time.Second, 3},
		{cardflow.Limits{RatePerSecond: 0.1}, time.Second, 1},
	} {
		window, allowed := rateWindow(c.l)
		if window != c.window || allowed != c.allowed {
			t.Errorf("rateWindow(%g/s, burst %d): got %v, %d, want %v, %d", c.l.RatePerSecond, c.l.Burst, window, allowed, c.window, c.allowed)
		}
	}
}
