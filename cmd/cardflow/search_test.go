package main

import (
	"strings"
	"testing"
)

func TestSearchPath(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name          string
		flags         searchFlags
		workflow      string
		want, wantErr string
		wantSearch    bool
	}{
		{"no filter", searchFlags{str(""), str(""), str(""), str(""), str("")}, "01KWF", "", "", false},
		{"status and workflow", searchFlags{str("FAILED"), str(""), str(""), str(""), str("")}, "01KWF",
			"/v1/workflows/searchExecutions?limit=5&status=FAILED&workflow_id=01KWF", "", true},
		{"a date and RFC 3339", searchFlags{str(""), str("PO-1"), str(""), str("2026-11-26"), str("2026-11-26T18:00:00Z")}, "",
			"/v1/workflows/searchExecutions?created_after=1795651200000&created_before=1795716000000&limit=5&process_id=PO-1", "", true},
		{"epoch milliseconds", searchFlags{str(""), str(""), str("SCHEDULE"), str("1700000000000"), str("")}, "",
			"/v1/workflows/searchExecutions?created_after=1700000000000&limit=5&trigger_type=SCHEDULE", "", true},
		{"not a time", searchFlags{str(""), str(""), str(""), str("yesterday"), str("")}, "", "", "--created-after", false},
	} {
		got, ok, err := tc.flags.searchPath(tc.workflow, 5)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: got error %v, want one naming %s", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || ok != tc.wantSearch || got != tc.want {
			t.Errorf("%s: got %q, %v, %v; want %q, %v", tc.name, got, ok, err, tc.want, tc.wantSearch)
		}
	}
}
