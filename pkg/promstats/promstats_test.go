package promstats_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/promstats"
)

// TestApprovalDecided counts decisions by outcome and puts their cycle
// times in the histogram's buckets, as /metrics shows them.
func TestApprovalDecided(t *testing.T) {
	m := promstats.New()
	m.ApprovalDecided("approved", 90*time.Second)
	m.ApprovalDecided("approved", 2*time.Hour)
	m.ApprovalDecided("timed_out", 72*time.Hour)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, line := range []string{
		`cardflow_approval_decisions_total{outcome="approved"} 2`,
		`cardflow_approval_decisions_total{outcome="timed_out"} 1`,
		`cardflow_approval_cycle_seconds_bucket{outcome="approved",le="60"} 0`,
		`cardflow_approval_cycle_seconds_bucket{outcome="approved",le="300"} 1`,
		`cardflow_approval_cycle_seconds_bucket{outcome="approved",le="14400"} 2`,
		`cardflow_approval_cycle_seconds_sum{outcome="approved"} 7290`,
		`cardflow_approval_cycle_seconds_bucket{outcome="timed_out",le="172800"} 0`,
		`cardflow_approval_cycle_seconds_bucket{outcome="timed_out",le="259200"} 1`,
	} {
		if !strings.Contains(string(body), line+"\n") {
			t.Errorf("/metrics: got no line %q", line)
		}
	}
}
