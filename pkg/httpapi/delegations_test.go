package httpapi_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// publishedDelegated publishes a workflow whose approval step asks ann, cy
// and fay, two of whom decide; the requester may not approve.
func (e *env) publishedDelegated(admin string) string {
	e.t.Helper()
	return e.publishedQuorum(admin, map[string]any{"approvers": []any{"ann@example.com", "cy@example.com", "fay@example.com"}})
}

// openApproval triggers wf for requester and returns its open approval.
func (e *env) openApproval(admin, wf, po, requester string) *cardflow.Approval {
	e.t.Helper()
	r := e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"/1?process_id="+po, map[string]any{"amount": 5000, "requester": requester})
	if r.status != 200 {
		e.t.Fatalf("trigger: got %d %s", r.status, r.raw)
	}
	exID := str(r.body["service_execution_id"])
	e.awaitStatus(admin, wf, exID, "WAITING")
	return e.awaitApproval("org-a", cardflow.ApprovalIDOf(exID, 1))
}

// TestDelegation: a person sets, lists and removes a delegation; while it
// holds, a new approval lists the delegate for them, whose answer records
// both; bad input is refused and changes nothing.
func TestDelegation(t *testing.T) {
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	ann, cy, dan := e.personKey("org-a", "ann@example.com"), e.personKey("org-a", "cy@example.com"), e.personKey("org-a", "dan@example.com")
	noPerson := e.key("org-a", "read", "execute")
	wf := e.publishedDelegated(admin)
	now := time.Now().UnixMilli()
	hour := int64(time.Hour / time.Millisecond)

	r := e.do("POST", "/v1/approvals/setDelegation", ann, map[string]any{"delegate": "dan@example.com", "starts_on": now - hour, "ends_on": now + hour})
	if r.status != 200 {
		t.Fatalf("set: got %d %s", r.status, r.raw)
	}
	d := r.body["item"].(map[string]any)["delegation"].(map[string]any)
	if d["approver"] != "ann@example.com" || d["delegate"] != "dan@example.com" {
		t.Errorf("set: got %v, want ann's to dan", d)
	}
	id := str(d["delegation_id"])

	for _, c := range []struct {
		name   string
		key    string
		body   map[string]any
		status int
		msg    string
	}{
		{"to oneself", ann, map[string]any{"delegate": "ANN@example.com", "starts_on": now + 2*hour, "ends_on": now + 3*hour}, 400, "themselves"},
		{"ends before it starts", ann, map[string]any{"delegate": "cy@example.com", "starts_on": now + 3*hour, "ends_on": now + 2*hour}, 400, "after starts_on"},
		{"ended", ann, map[string]any{"delegate": "cy@example.com", "starts_on": now - 3*hour, "ends_on": now - 2*hour}, 400, "in the past"},
		{"no delegate", ann, map[string]any{"starts_on": now + 2*hour, "ends_on": now + 3*hour}, 400, "delegate"},
		{"no person", ann, map[string]any{"delegate": "not a person", "starts_on": now + 2*hour, "ends_on": now + 3*hour}, 400, "delegate must name a person"},
		{"overlapping", ann, map[string]any{"delegate": "cy@example.com", "starts_on": now, "ends_on": now + 3*hour}, 409, "overlaps"},
		{"someone else's, not an admin", ann, map[string]any{"approver": "cy@example.com", "delegate": "dan@example.com", "starts_on": now + 2*hour, "ends_on": now + 3*hour}, 403, "admin"},
		{"a key of no person", noPerson, map[string]any{"delegate": "dan@example.com", "starts_on": now + 2*hour, "ends_on": now + 3*hour}, 400, "acts for no person"},
		{"move_pending later", cy, map[string]any{"delegate": "dan@example.com", "starts_on": now + 2*hour, "ends_on": now + 3*hour, "move_pending": true}, 400, "must hold now"},
	} {
		r := e.do("POST", "/v1/approvals/setDelegation", c.key, c.body)
		if r.status != c.status || !strings.Contains(r.msg(), c.msg) {
			t.Errorf("%s: got %d %s, want %d with %q", c.name, r.status, r.raw, c.status, c.msg)
		}
	}

	for _, c := range []struct {
		name, key, query string
		status, count    int
	}{
		{"ann's own", ann, "", 200, 1},
		{"dan receives it", dan, "", 200, 1},
		{"cy has none", cy, "", 200, 0},
		{"an admin's, all", admin, "", 200, 1},
		{"an admin's, cy's", admin, "?approver=cy@example.com", 200, 0},
		{"an admin's, ann's", admin, "?approver=ann@example.com", 200, 1},
		{"cy asks for ann's", cy, "?approver=ann@example.com", 403, 0},
	} {
		r := e.do("GET", "/v1/approvals/getDelegations"+c.query, c.key, nil)
		if r.status != c.status || r.status == 200 && r.body["count"] != float64(c.count) {
			t.Errorf("list, %s: got %d %s, want %d with %d", c.name, r.status, r.raw, c.status, c.count)
		}
	}

	a := e.openApproval(admin, wf, "PO-1", "bob@example.com")
	if got, want := a.Approvers, []string{"dan@example.com", "cy@example.com", "fay@example.com"}; !slices.Equal(got, want) {
		t.Errorf("approvers while ann is away: got %v, want %v", got, want)
	}
	if got := a.StandIns; len(got) != 1 || got[0].For != "ann@example.com" || got[0].Delegate != "dan@example.com" || got[0].DelegationID != id {
		t.Errorf("stand-ins: got %+v, want dan for ann", got)
	}
	if r := e.do("POST", "/v1/approvals/answerApproval", ann, map[string]any{"approval_id": a.ApprovalID, "decision": "approve"}); r.status != 403 {
		t.Errorf("ann while away: got %d %s, want 403", r.status, r.raw)
	}
	r = e.do("POST", "/v1/approvals/answerApproval", dan, map[string]any{"approval_id": a.ApprovalID, "decision": "approve"})
	if r.status != 200 {
		t.Fatalf("dan: got %d %s", r.status, r.raw)
	}
	ans := r.body["item"].(map[string]any)["answers"].([]any)[0].(map[string]any)
	if ans["approver"] != "dan@example.com" || ans["actor"] != "dan@example.com" || ans["on_behalf_of"] != "ann@example.com" {
		t.Errorf("dan's answer: got %v, want by dan on behalf of ann", ans)
	}

	for _, c := range []struct {
		name, key string
		status    int
	}{
		{"cy removes ann's", cy, 404},
		{"ann removes hers", ann, 200},
		{"ann again", ann, 404},
	} {
		if r := e.do("POST", "/v1/approvals/removeDelegation", c.key, map[string]any{"delegation_id": id}); r.status != c.status {
			t.Errorf("%s: got %d %s, want %d", c.name, r.status, r.raw, c.status)
		}
	}
	if r := e.do("POST", "/v1/approvals/removeDelegation", ann, map[string]any{}); r.status != 400 {
		t.Errorf("remove without an id: got %d %s, want 400", r.status, r.raw)
	}
	if a := e.openApproval(admin, wf, "PO-2", "bob@example.com"); a.Approvers[0] != "ann@example.com" || len(a.StandIns) != 0 {
		t.Errorf("after removing: got approvers %v, stand-ins %v, want ann back", a.Approvers, a.StandIns)
	}
}

// TestDelegationMovesPendingAndForbidsSelf: move_pending hands a pending
// approval on through its reassignments; forbid_self_approval holds for
// the delegate and for whom they stand in.
func TestDelegationMovesPendingAndForbidsSelf(t *testing.T) {
	e := newEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	bob, dan, fay := e.personKey("org-a", "bob@example.com"), e.personKey("org-a", "dan@example.com"), e.personKey("org-a", "fay@example.com")
	wf := e.publishedDelegated(admin)
	now := time.Now().UnixMilli()
	hour := int64(time.Hour / time.Millisecond)

	pending := e.openApproval(admin, wf, "PO-0", "bob@example.com")
	// An admin names the approver.
	r := e.do("POST", "/v1/approvals/setDelegation", admin, map[string]any{"approver": "ann@example.com", "delegate": "dan@example.com",
		"starts_on": now - hour, "ends_on": now + hour, "move_pending": true})
	if r.status != 200 {
		t.Fatalf("set with move_pending: got %d %s", r.status, r.raw)
	}
	if got := toStrings(r.body["item"].(map[string]any)["moved"]); !slices.Equal(got, []string{pending.ApprovalID}) {
		t.Errorf("moved: got %v, want %s", got, pending.ApprovalID)
	}
	moved := e.awaitApproval("org-a", pending.ApprovalID)
	if got := moved.Reassignments; len(got) != 1 || got[0].From != "ann@example.com" || got[0].To != "dan@example.com" {
		t.Errorf("reassignments: got %+v, want ann's to dan", got)
	}
	if r := e.do("POST", "/v1/approvals/answerApproval", dan, map[string]any{"approval_id": pending.ApprovalID, "decision": "approve"}); r.status != 200 ||
		!strings.Contains(string(r.raw), `"on_behalf_of":"ann@example.com"`) {
		t.Errorf("dan on the moved approval: got %d %s, want his answer on behalf of ann", r.status, r.raw)
	}

	// cy is away too, and bob stands in.
	if r := e.do("POST", "/v1/approvals/setDelegation", admin, map[string]any{"approver": "cy@example.com", "delegate": "bob@example.com",
		"starts_on": now - hour, "ends_on": now + hour}); r.status != 200 {
		t.Fatalf("set cy's: got %d %s", r.status, r.raw)
	}
	// bob asked: as cy's delegate he may not approve his own request.
	a := e.openApproval(admin, wf, "PO-1", "bob@example.com")
	if r := e.do("POST", "/v1/approvals/answerApproval", bob, map[string]any{"approval_id": a.ApprovalID, "decision": "approve"}); r.status != 403 || !strings.Contains(r.msg(), "requested this approval") {
		t.Errorf("bob, the requester, for cy: got %d %s, want 403", r.status, r.raw)
	}
	// ann asked: dan, who stands in for her, may not approve it either.
	a = e.openApproval(admin, wf, "PO-2", "ann@example.com")
	if r := e.do("POST", "/v1/approvals/answerApproval", dan, map[string]any{"approval_id": a.ApprovalID, "decision": "approve"}); r.status != 403 || !strings.Contains(r.msg(), "stand in") {
		t.Errorf("dan for ann, the requester: got %d %s, want 403", r.status, r.raw)
	}
	for _, k := range []string{bob, fay} {
		if r := e.do("POST", "/v1/approvals/answerApproval", k, map[string]any{"approval_id": a.ApprovalID, "decision": "approve"}); r.status != 200 {
			t.Errorf("answer: got %d %s", r.status, r.raw)
		}
	}
	if got := e.awaitApproval("org-a", a.ApprovalID, func(a *cardflow.Approval) bool { return !a.Open() }); got.Status != cardflow.ApprovalApproved {
		t.Errorf("status: got %s, want APPROVED", got.Status)
	}
}
