package httpapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// TestApprovalStatsAndOverdue decides approvals of two workflows through
// the API, leaves one open past its due, and reads the statistics back:
// the counts, the approvers' answers and what waits on them, the open
// approvals by workflow, and nothing of it for another organization.
func TestApprovalStatsAndOverdue(t *testing.T) {
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	ann, cy := e.personKey("org-a", "ann@example.com"), e.personKey("org-a", "cy@example.com")
	// Due a millisecond after it opens: overdue as soon as it is listed.
	late := e.publishedQuorum(admin, map[string]any{"due": "PT0.001S", "remind_when_due": true})
	onTime := e.publishedQuorum(admin, map[string]any{"due": "P2D"})
	start := func(wf string) string {
		t.Helper()
		r := e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"/1", map[string]any{"amount": 10, "requester": "bob@example.com"})
		if r.status != 200 {
			t.Fatalf("trigger: got %d %s", r.status, r.raw)
		}
		id := str(r.body["service_execution_id"])
		e.awaitApproval("org-a", cardflow.ApprovalIDOf(id, 1))
		return id
	}
	open, approved, rejected := start(late), start(onTime), start(onTime)
	answer := func(key, exID, decision string) {
		t.Helper()
		r := e.do("POST", "/v1/approvals/answerApproval", key, map[string]any{"approval_id": cardflow.ApprovalIDOf(exID, 1), "decision": decision})
		if r.status != 200 {
			t.Fatalf("answer %s: got %d %s", decision, r.status, r.raw)
		}
	}
	answer(ann, approved, "approve")
	answer(cy, approved, "approve")
	answer(ann, rejected, "reject")
	e.awaitStatus(admin, onTime, approved, "SUCCEEDED")
	e.awaitStatus(admin, onTime, rejected, "FAILED")

	// The open one is overdue once its millisecond has passed.
	var overdue response
	for deadline := time.Now().Add(10 * time.Second); ; {
		overdue = e.do("GET", "/v1/approvals/getPendingApprovals?overdue=true", admin, nil)
		if overdue.body["count"] == 1.0 || time.Now().After(deadline) {
			break
		}
	}
	if overdue.status != 200 || overdue.body["count"] != 1.0 {
		t.Fatalf("overdue approvals: got %d %s, want one", overdue.status, overdue.raw)
	}
	item := items(overdue)[0]
	if item["approval_id"] != cardflow.ApprovalIDOf(open, 1) || item["overdue"] != true || item["due"].(float64) <= item["created_on"].(float64) {
		t.Errorf("overdue approval: got %v, want %s, overdue, due after created_on", item, cardflow.ApprovalIDOf(open, 1))
	}
	if r := e.do("GET", "/v1/approvals/getPendingApprovals?overdue=false", admin, nil); r.status != 200 || r.body["count"] != 0.0 {
		t.Errorf("approvals not overdue: got %d %s, want none", r.status, r.raw)
	}
	if r := e.do("GET", "/v1/approvals/getApprovalById?approval_id="+cardflow.ApprovalIDOf(approved, 1), admin, nil); r.body["item"].(map[string]any)["overdue"] != nil {
		t.Errorf("a decided approval: got %s, want no overdue however old", r.raw)
	}

	stats := func(key, query string) map[string]any {
		t.Helper()
		r := e.do("GET", "/v1/approvals/getApprovalStats"+query, key, nil)
		if r.status != 200 {
			t.Fatalf("getApprovalStats%s: got %d %s", query, r.status, r.raw)
		}
		return r.body["item"].(map[string]any)
	}
	counts := func(s map[string]any) string {
		var out []string
		for _, k := range []string{"approved", "rejected", "timed_out", "overridden", "cancelled", "pending", "overdue"} {
			out = append(out, fmt.Sprintf("%s=%v", k, s[k]))
		}
		return strings.Join(out, " ")
	}
	all := stats(admin, "")
	if got, want := counts(all), "approved=1 rejected=1 timed_out=0 overridden=0 cancelled=0 pending=1 overdue=1"; got != want {
		t.Errorf("counts: got %s, want %s", got, want)
	}
	if cycle := all["cycle_time_ms"].(map[string]any); cycle["decided"] != 2.0 || cycle["p50"].(float64) <= 0 || cycle["max"].(float64) < cycle["p95"].(float64) {
		t.Errorf("cycle_time_ms: got %v, want two decided", cycle)
	}
	days := all["by_day"].([]any)
	today := days[len(days)-1].(map[string]any)
	if len(days) != 30 || today["day"] != time.Now().UTC().Format("2006-01-02") || today["approved"] != 1.0 || today["rejected"] != 1.0 {
		t.Errorf("by_day: got %d days ending %v, want 30 ending today with one approved and one rejected", len(days), today)
	}
	var approvers []string
	for _, a := range all["by_approver"].([]any) {
		m := a.(map[string]any)
		approvers = append(approvers, fmt.Sprintf("%v %v %v %v %v", m["approver"], m["answered"], m["approved"], m["rejected"], m["pending"]))
	}
	// bob asked, and may not approve: nothing waits on him.
	if want := []string{"ann@example.com 2 1 1 1", "cy@example.com 1 1 0 1"}; !slices.Equal(approvers, want) {
		t.Errorf("by_approver (approver answered approved rejected pending):\ngot  %q\nwant %q", approvers, want)
	}
	if got := all["by_workflow"].([]any); len(got) != 1 || got[0].(map[string]any)["workflow_id"] != late || got[0].(map[string]any)["overdue"] != 1.0 {
		t.Errorf("by_workflow: got %v, want the open one of %s, overdue", got, late)
	}
	if got, want := counts(stats(admin, "?workflow_id="+onTime)), "approved=1 rejected=1 timed_out=0 overridden=0 cancelled=0 pending=0 overdue=0"; got != want {
		t.Errorf("counts of %s: got %s, want %s", onTime, got, want)
	}
	if got, want := counts(stats(admin, "?from=2020-01-01&to=2020-01-31")), "approved=0 rejected=0 timed_out=0 overridden=0 cancelled=0 pending=1 overdue=1"; got != want {
		t.Errorf("counts of January 2020: got %s, want %s", got, want)
	}
	other := e.key("org-b", "read")
	if got, want := counts(stats(other, "?workflow_id="+onTime)), "approved=0 rejected=0 timed_out=0 overridden=0 cancelled=0 pending=0 overdue=0"; got != want {
		t.Errorf("counts for another organization: got %s, want %s", got, want)
	}

	for _, c := range []struct{ query, msg string }{
		{"?from=2026-13-01", "from must be a day such as 2026-11-29"},
		{"?from=29.11.2026", "query parameter from must be a day"},
		{"?from=2026-11-30&to=2026-11-01", "from 2026-11-30 is after to 2026-11-01"},
		{"?from=2025-01-01&to=2026-11-01", "covers 670 days; statistics cover at most 366"},
		{"?workflow_id=nope", "query parameter workflow_id must be an id"},
		{"?days=7", "days"},
	} {
		if r := e.do("GET", "/v1/approvals/getApprovalStats"+c.query, admin, nil); r.status != 400 || !strings.Contains(r.msg(), c.msg) {
			t.Errorf("%s: got %d %s, want 400 with %q", c.query, r.status, r.raw, c.msg)
		}
	}
	if r := e.do("GET", "/v1/approvals/getPendingApprovals?overdue=yes", admin, nil); r.status != 400 || !strings.Contains(r.msg(), "overdue must be true or false") {
		t.Errorf("overdue=yes: got %d %s, want 400", r.status, r.raw)
	}
}
