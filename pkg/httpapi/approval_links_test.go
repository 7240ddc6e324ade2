package httpapi_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/fakes/teamstest"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/teams"
)

// teamsApprovalStep publishes teamsCard and a workflow whose approval step
// delivers it by the given Teams profile, with config added to the step's.
func (e *env) teamsApprovalStep(admin string, profile, config map[string]any) string {
	e.t.Helper()
	r := e.do("POST", "/v1/adaptive-cards/saveCard", admin, map[string]any{"card_name": "Approval", "card_payload": teamsCard()})
	cardID := str(r.body["item"].(map[string]any)["card_id"])
	e.do("POST", "/v1/adaptive-cards/publishCard", admin, map[string]any{"card_id": cardID, "card_version": 1})
	cfg := map[string]any{"card_id": cardID, "data": map[string]any{"amount": "{{ input.amount }}"}, "timeout": "PT72H"}
	for k, v := range config {
		cfg[k] = v
	}
	body := map[string]any{
		"workflow_name": "Purchase approval",
		"workflow_steps": []any{
			map[string]any{"id": "start", "name": "Requested", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
			map[string]any{"id": "approve", "name": "Panel approval", "type": "approval", "config": cfg},
			map[string]any{"id": "done", "name": "Approved", "type": "end", "config": map[string]any{"status": "SUCCEEDED"}},
			map[string]any{"id": "no", "name": "Rejected", "type": "end", "config": map[string]any{"status": "FAILED"}},
		},
		"workflow_connections": []any{
			map[string]any{"from": "start", "to": "approve"},
			map[string]any{"from": "approve", "to": "done"},
			map[string]any{"from": "approve", "to": "no", "on": "rejected"},
		},
	}
	if profile != nil {
		e.registerBotConversation(admin, profile)
		body["workflow_integrations"] = map[string]any{"teams": profile}
	}
	r = e.do("POST", "/v1/workflows/saveWorkflow", admin, body)
	if r.status != 200 {
		e.t.Fatalf("saveWorkflow: got %d %s", r.status, r.raw)
	}
	wf := str(r.body["item"].(map[string]any)["workflow_id"])
	if r := e.do("POST", "/v1/workflows/publishWorkflow", admin, map[string]any{"workflow_id": wf, "workflow_version": 1}); r.status != 200 {
		e.t.Fatalf("publishWorkflow: got %d %s", r.status, r.raw)
	}
	return wf
}

// awaitApproval waits until the approval record exists and until done
// (if given) holds for it: an execution is WAITING a moment before its
// approval step records the approval and posts its cards.
func (e *env) awaitApproval(org, id string, done ...func(*cardflow.Approval) bool) *cardflow.Approval {
	e.t.Helper()
	var a *cardflow.Approval
	testenv.WaitFor(e.t, "approval "+id, func() bool {
		got, err := e.store.GetApproval(context.Background(), org, id)
		a = got
		return err == nil && (len(done) == 0 || done[0](a))
	})
	return a
}

// ownWebhooks is a webhook profile that posts each approver's copy to a
// webhook of their own (newTeamsEnv's ann-hook, bob-hook, cy-hook).
func ownWebhooks() map[string]any {
	return map[string]any{"type": "webhook", "approver_webhooks": map[string]any{
		"ann@example.com": "ann-hook", "bob@example.com": "bob-hook", "cy@example.com": "cy-hook",
	}}
}

// personalLinks reads the approver and the Approve link of each posted
// webhook card, by approver.
func personalLinks(t *testing.T, posted []map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, body := range posted {
		link := str(cardActions(t, body)["Approve"]["url"])
		u, err := url.Parse(link)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := teams.VerifyLink([]byte(teamsSigningKey), u.Query().Get("token"), time.Now())
		if err != nil {
			t.Fatalf("link %s: %v", link, err)
		}
		out[ref.Who] = link
	}
	return out
}

// approvalEvents lists an execution's approval events as "type actor".
func approvalEvents(ex map[string]any) []string {
	var out []string
	for _, ev := range ex["workflow_event_log"].(map[string]any)["events"].([]any) {
		m := ev.(map[string]any)
		if typ := str(m["type"]); strings.HasPrefix(typ, "Approval") {
			out = append(out, typ+" "+str(m["actor"]))
		}
	}
	return out
}

// TestApprovalPersonalLinks: each approver's card carries links that name
// them; opening one changes nothing; its confirmation answers as them by
// the approval's rules, refusals are pages and audit events, and a late
// click sees the decision.
func TestApprovalPersonalLinks(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	wf := e.teamsApprovalStep(admin, ownWebhooks(), map[string]any{
		"approvers": []any{"ann@example.com", "bob@example.com", "cy@example.com"}, "policy": "quorum", "count": 2,
		"forbid_self_approval": "{{ input.requester }}",
	})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-7", map[string]any{"amount": 7000, "requester": "cy@example.com"}).body["service_execution_id"])
	var bodies []map[string]any
	for _, r := range awaitRequests(t, fake, "/webhook/", 3) {
		bodies = append(bodies, r.Body)
	}
	links := personalLinks(t, bodies)
	if got := slices.Sorted(func(yield func(string) bool) {
		for who := range links {
			if !yield(who) {
				return
			}
		}
	}); !slices.Equal(got, []string{"ann@example.com", "bob@example.com", "cy@example.com"}) {
		t.Fatalf("cards went to %v, want one per approver", got)
	}
	e.awaitStatus(admin, wf, exID, "WAITING")
	approvalID := cardflow.ApprovalIDOf(exID, 1)
	answers := func() int {
		a, err := e.store.GetApproval(context.Background(), "org-a", approvalID)
		if err != nil {
			t.Fatal(err)
		}
		return len(a.Answers)
	}

	// Opening ann's link, by GET and HEAD, any number of times, records
	// nothing.
	var page string
	for _, method := range []string{"GET", "HEAD", "GET"} {
		status, body, _ := e.linkRequest(method, links["ann@example.com"], nil)
		if status != 200 {
			t.Fatalf("%s: got %d %s", method, status, body)
		}
		if method == "GET" {
			page = body
		}
	}
	if !strings.Contains(page, "<h1>Panel approval</h1>") || !strings.Contains(page, "Approve 7000 EUR?") {
		t.Errorf("ann's page: got %s, want the step and its card", page)
	}
	if n := answers(); n != 0 {
		t.Fatalf("after opening the link: %d answers, want none", n)
	}

	confirm := func(who string) string {
		t.Helper()
		_, body := e.page(links[who])
		status, body, _ := e.linkRequest("POST", e.srv.URL+"/v1/teams/respond", confirmForm(t, body))
		if status != 200 {
			t.Fatalf("%s confirms: got %d %s, want 200", who, status, body)
		}
		return body
	}
	form := func(who string) url.Values {
		_, body := e.page(links[who])
		return confirmForm(t, body)
	}
	annForm := form("ann@example.com")
	for _, c := range []struct {
		name string
		send func() string
		want string
	}{
		{"ann approves", func() string { return confirm("ann@example.com") }, "Your answer (approve) is recorded; the approval waits for the other approvers."},
		{"ann's form again", func() string {
			_, body, _ := e.linkRequest("POST", e.srv.URL+"/v1/teams/respond", annForm)
			return body
		}, "You answered (approve) on"},
		{"the requester", func() string { return confirm("cy@example.com") }, "you may not approve it"},
		{"bob approves", func() string { return confirm("bob@example.com") }, "Your answer (approve) is recorded; the approval is approved."},
	} {
		if got := c.send(); !strings.Contains(got, c.want) {
			t.Errorf("%s: got %s, want it to say %q", c.name, got, c.want)
		}
	}
	done := e.awaitStatus(admin, wf, exID, "SUCCEEDED")
	// A link naming someone who is not listed (signed by this service)
	// counts for nothing either.
	u, _ := url.Parse(links["ann@example.com"])
	ref, _ := teams.VerifyLink([]byte(teamsSigningKey), u.Query().Get("token"), time.Now())
	ref.Who = "eve@example.com"
	eve, _ := teams.SignLink([]byte(teamsSigningKey), *ref)
	form2 := url.Values{"token": {eve}, "confirmation": {teams.SignConfirmation([]byte(teamsSigningKey), eve)}}
	if _, body, _ := e.linkRequest("POST", e.srv.URL+"/v1/teams/respond", form2); !strings.Contains(body, "This approval was approved") {
		t.Errorf("eve after the decision: got %s, want the decision", body)
	}

	// Late clicks see the decision and change nothing.
	for _, who := range []string{"cy@example.com", "ann@example.com"} {
		if _, body := e.page(links[who]); !strings.Contains(body, "This approval was approved") || strings.Contains(body, "<form") {
			t.Errorf("%s's link after the decision: got %s, want the decision and no form", who, body)
		}
	}
	want := []string{
		"ApprovalOpened ", "ApprovalAnswered ann@example.com",
		"ApprovalRefused cy@example.com", "ApprovalAnswered bob@example.com", "ApprovalDecided bob@example.com",
	}
	if got := approvalEvents(done); !slices.Equal(got, want) {
		t.Errorf("approval events:\ngot  %q\nwant %q", got, want)
	}
	a, err := e.store.GetApproval(context.Background(), "org-a", approvalID)
	if err != nil || len(a.Answers) != 2 || a.Answers[0].Channel != cardflow.ChannelLink || a.Answers[1].Approver != "bob@example.com" {
		t.Errorf("approval: got %+v, %v; want ann's and bob's answers through links", a, err)
	}
}

// TestApprovalLinksSequentialAndOutbox: under sequential only the approver
// whose turn it is holds a card; the next gets theirs once the one before
// approved. Outbox copies name their recipient and carry no link.
func TestApprovalLinksSequentialAndOutbox(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	wf := e.teamsApprovalStep(admin, ownWebhooks(), map[string]any{
		"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "sequential",
	})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 300}).body["service_execution_id"])
	e.awaitStatus(admin, wf, exID, "WAITING")
	first := awaitRequests(t, fake, "/webhook/", 1)
	time.Sleep(50 * time.Millisecond)
	if n := len(fake.Requests("/webhook/")); n != 1 {
		t.Fatalf("sequential: %d cards at the start, want ann's alone", n)
	}
	links := personalLinks(t, []map[string]any{first[0].Body})
	if _, ok := links["ann@example.com"]; !ok || len(links) != 1 {
		t.Fatalf("sequential: got cards for %v, want ann's", links)
	}
	ann := e.personKey("org-a", "ann@example.com")
	if r := e.do("POST", "/v1/approvals/answerApproval", ann, map[string]any{"approval_id": cardflow.ApprovalIDOf(exID, 1), "decision": "approve"}); r.status != 200 {
		t.Fatalf("ann approves: got %d %s", r.status, r.raw)
	}
	var bodies []map[string]any
	for _, r := range awaitRequests(t, fake, "/webhook/", 2) {
		bodies = append(bodies, r.Body)
	}
	links = personalLinks(t, bodies[1:])
	if _, ok := links["bob@example.com"]; !ok || len(links) != 1 {
		t.Fatalf("after ann approved: got cards for %v, want bob's", links)
	}

	// The outbox: one copy per approver, none with a link.
	wf2 := e.teamsApprovalStep(admin, nil, map[string]any{"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all"})
	ex2 := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf2, map[string]any{"amount": 300}).body["service_execution_id"])
	e.awaitStatus(admin, wf2, ex2, "WAITING")
	// The cards go out as the wait opens: read the outbox until both are in.
	var got []string
	testenv.WaitFor(t, "both copies in the outbox", func() bool {
		got = nil
		for _, m := range items(e.get("/v1/adaptive-cards/outbox", admin)) {
			if m["workflow_execution_id"] != ex2 {
				continue
			}
			if _, ok := m["links"]; ok {
				t.Fatalf("outbox copy: got %v, want no links", m)
			}
			got = append(got, fmt.Sprintf("%s %s %s", m["channel"], m["recipient"], m["status"]))
		}
		return len(got) >= 2
	})
	slices.Sort(got)
	if want := []string{"outbox ann@example.com DELIVERED", "outbox bob@example.com DELIVERED"}; !slices.Equal(got, want) {
		t.Errorf("outbox: got %q, want %q", got, want)
	}
}

// botInvoke is invoke from a Teams account with a UPN.
func botInvoke(fake *teamstest.Server, name string, data map[string]any) map[string]any {
	a := invoke(fake, name, data)
	from := a["from"].(map[string]any)
	from["userPrincipalName"] = name + "@example.com"
	from["aadObjectId"] = fmt.Sprintf("00000000-0000-4000-8000-%012x", name[0])
	return a
}

// TestApprovalBot: through the bot only a listed approver's answer counts;
// anyone else gets a card saying so and nothing changes. Once the step
// decides, every posted copy of its card is updated, and a late click gets
// the decision, not a second one.
func TestApprovalBot(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	profile := map[string]any{"type": "bot", "service_url": fake.ServiceURL(), "conversation_id": "19:approvers@thread.tacv2", "tenant_id": "tenant-1"}
	wf := e.teamsApprovalStep(admin, profile, map[string]any{"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all"})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-8", map[string]any{"amount": 800}).body["service_execution_id"])
	posted := awaitRequests(t, fake, "/connector/", 2)
	e.awaitStatus(admin, wf, exID, "WAITING")
	data := cardActions(t, posted[0].Body)["Approve"]["data"].(map[string]any)
	approvalID := cardflow.ApprovalIDOf(exID, 1)
	approval := func() *cardflow.Approval {
		a, err := e.store.GetApproval(context.Background(), "org-a", approvalID)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	// Both copies are recorded by activity id.
	e.awaitApproval("org-a", approvalID, func(a *cardflow.Approval) bool { return len(a.Posts) == 2 })
	valid := fake.Token(t, time.Now(), fake.ServiceURL())
	answer := func(who string) response {
		t.Helper()
		r := e.botPost(valid, botInvoke(fake, who, map[string]any{"decision": "approve", teams.DataKey: data[teams.DataKey]}))
		if r.status != 200 || r.body["type"] != "application/vnd.microsoft.card.adaptive" {
			t.Fatalf("%s: got %d %s, want a card", who, r.status, r.raw)
		}
		return r
	}
	for _, c := range []struct {
		who, want string
		answers   int
	}{
		{"eve", "you are not an approver of step", 0},
		{"ann", "Your answer (approve) is recorded; the approval waits for the other approvers.", 1},
		{"bob", "Your answer (approve) is recorded; the approval is approved.", 2},
		{"eve", "This approval was approved on", 2},
		{"ann", "This approval was approved on", 2},
	} {
		if got := jsonOf(answer(c.who).body["value"]); !strings.Contains(got, c.want) {
			t.Errorf("%s: got card %s, want it to say %q", c.who, got, c.want)
		}
		if a := approval(); len(a.Answers) != c.answers {
			t.Errorf("after %s: %d answers, want %d", c.who, len(a.Answers), c.answers)
		}
	}
	done := e.awaitStatus(admin, wf, exID, "SUCCEEDED")
	eve := "teams:" + fmt.Sprintf("00000000-0000-4000-8000-%012x", 'e')
	if got := approvalEvents(done); len(got) < 2 || got[1] != "ApprovalRefused "+eve {
		t.Errorf("events %q: want eve's refusal first", got)
	}
	// Both posted copies were replaced by the decision, by activity id.
	updates := awaitRequests(t, fake, "/connector/", 4)[2:]
	for i, u := range updates {
		if u.Method != "PUT" || !strings.HasPrefix(u.Path, "/connector/v3/conversations/19:approvers@thread.tacv2/activities/") {
			t.Errorf("update %d: got %s %s, want a PUT of a posted activity", i, u.Method, u.Path)
		}
		if got := jsonOf(u.Body); !strings.Contains(got, "This approval was approved on") || strings.Contains(got, "Action.") {
			t.Errorf("update %d: got %s, want the decision without buttons", i, got)
		}
	}
}

// TestApprovalCardsUpdatedOnOverride: an admin's override updates the
// posted copies: they say who overrode it and why.
func TestApprovalCardsUpdatedOnOverride(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	profile := map[string]any{"type": "bot", "service_url": fake.ServiceURL(), "conversation_id": "19:approvers@thread.tacv2", "tenant_id": "tenant-1"}
	wf := e.teamsApprovalStep(admin, profile, map[string]any{"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "first"})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf+"?process_id=PO-9", map[string]any{"amount": 900}).body["service_execution_id"])
	awaitRequests(t, fake, "/connector/", 2)
	e.awaitWaitOpen("org-a", "PO-9")
	id := cardflow.ApprovalIDOf(exID, 1)
	if r := e.do("POST", "/v1/approvals/overrideApproval", admin, map[string]any{"approval_id": id, "decision": "approve", "reason": "both approvers are away"}); r.status != 200 {
		t.Fatalf("overrideApproval: got %d %s", r.status, r.raw)
	}
	e.awaitStatus(admin, wf, exID, "SUCCEEDED")
	for i, u := range awaitRequests(t, fake, "/connector/", 4)[2:] {
		if body := jsonOf(u.Body); u.Method != "PUT" || !strings.Contains(body, "overridden by") || !strings.Contains(body, "both approvers are away") {
			t.Errorf("update %d: got %s %s, want the override", i, u.Method, jsonOf(u.Body))
		}
	}
}

// TestApprovalCardsUpdatedOnTimeout: when no decision comes in time, the
// posted copies say so, and a late click gets that, not a decision.
func TestApprovalCardsUpdatedOnTimeout(t *testing.T) {
	t.Parallel()
	e, fake := newTeamsEnv(t)
	admin := e.key("org-a", "read", "admin", "execute")
	profile := map[string]any{"type": "bot", "service_url": fake.ServiceURL(), "conversation_id": "19:approvers@thread.tacv2", "tenant_id": "tenant-1"}
	wf := e.teamsApprovalStep(admin, profile, map[string]any{"approvers": []any{"ann@example.com", "bob@example.com"}, "policy": "all", "timeout": "PT1S"})
	exID := str(e.trigger(admin, "/v1/workflows/triggerworkflow/"+wf, map[string]any{"amount": 100}).body["service_execution_id"])
	posted := awaitRequests(t, fake, "/connector/", 2)
	e.awaitStatus(admin, wf, exID, "TIMED_OUT")
	for i, u := range awaitRequests(t, fake, "/connector/", 4)[2:] {
		if u.Method != "PUT" || !strings.Contains(jsonOf(u.Body), "timed out") {
			t.Errorf("update %d: got %s %s, want the timeout", i, u.Method, jsonOf(u.Body))
		}
	}
	data := cardActions(t, posted[0].Body)["Approve"]["data"].(map[string]any)
	r := e.botPost(fake.Token(t, time.Now(), fake.ServiceURL()), botInvoke(fake, "ann", map[string]any{"decision": "approve", teams.DataKey: data[teams.DataKey]}))
	if r.status != 200 || !strings.Contains(jsonOf(r.body["value"]), "This approval timed out") {
		t.Errorf("late click: got %d %s, want the timeout card", r.status, r.raw)
	}
}
