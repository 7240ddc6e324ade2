package httpapi_test

import (
	"strings"
	"testing"
)

// TestPendingApprovalFilters: the filters refuse what the spec refuses
// and take what it allows.
func TestPendingApprovalFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := e.key("org-a", "read")
	long := strings.Repeat("é", 300) + "@example.com"
	for _, tc := range []struct {
		name, param, value string
		status             int
		msg                string
	}{
		{"a long approver, in characters", "approver", long, 200, ""},
		{"an approver past 320 characters", "approver", strings.Repeat("a", 321), 400, "1 to 320 characters"},
		{"an empty approver", "approver", "", 400, "must name a person"},
		{"an empty workflow_id", "workflow_id", "", 400, "must be an id"},
		{"a workflow_id that is no id", "workflow_id", "wf-1", 400, "must be an id"},
		{"a workflow_id", "workflow_id", "01J9Z3K8Q6X2M4T7V5B1N0C8DE", 200, ""},
		{"an empty older_than", "older_than", "", 400, "ISO 8601 duration"},
		{"older_than", "older_than", "PT24H", 200, ""},
		{"an empty page key", "approval_id", "", 400, "must be an approval id"},
		{"a page key that is no approval id", "approval_id", "x", 400, "must be an approval id"},
		{"a page key", "approval_id", "01J9Z3K8Q6X2M4T7V5B1N0C8DE-0001", 200, ""},
	} {
		r := e.get("/v1/approvals/getPendingApprovals", key, tc.param, tc.value)
		if r.status != tc.status || !strings.Contains(r.msg(), tc.msg) {
			t.Errorf("%s: got %d %s, want %d with %q", tc.name, r.status, r.raw, tc.status, tc.msg)
		}
	}
}
