package app_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// bot stands in for the Teams adapter: it hands out the activity it holds
// and records the cards it is asked to replace.
type bot struct {
	activity   *cardflow.BotActivity
	err        error
	replaceErr error

	mu       sync.Mutex
	replaced []replacement
}

type replacement struct {
	conv       cardflow.BotConversation
	activityID string
	outcome    cardflow.CardOutcome
}

func (b *bot) VerifyActivity(context.Context, string, []byte) (*cardflow.BotActivity, error) {
	return b.activity, b.err
}

func (b *bot) DecisionReply(o cardflow.CardOutcome) map[string]any {
	return map[string]any{"outcome": o}
}

func (b *bot) ReplaceCard(_ context.Context, conv cardflow.BotConversation, activityID string, o cardflow.CardOutcome) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.replaced = append(b.replaced, replacement{conv, activityID, o})
	return b.replaceErr
}

// link stands in for the adapter that checks response links.
type link struct {
	answer *cardflow.CardAnswer
	err    error
}

func (l link) VerifyResponseLink(context.Context, string) (*cardflow.CardAnswer, error) {
	return l.answer, l.err
}

func (l link) ConfirmResponseLink(_ context.Context, token string) (string, error) {
	return "confirm:" + token, nil
}

func (l link) VerifyConfirmation(_ context.Context, token, confirmation string) error {
	if confirmation != "confirm:"+token {
		return cardflow.Errorf(cardflow.EINVALID, "this confirmation is not valid")
	}
	return nil
}

// answering is a service whose execution 01KEX waits at its card for
// answers to wait 1 of process PO-1.
type answering struct {
	svc    *app.Service
	store  *boltstore.Store
	runner *wakes
	log    *bytes.Buffer
}

func newAnswering(t *testing.T, closed bool, deps app.Deps) *answering {
	t.Helper()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	a := &answering{store: store, runner: &wakes{}, log: &bytes.Buffer{}}
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	ms := now.UnixMilli()
	deps.Runner = a.runner
	if a.svc, err = app.New(store, deps, app.WithClock(func() time.Time { return now }),
		app.WithLogger(slog.New(slog.NewTextHandler(a.log, nil)))); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ex := &cardflow.Execution{
		WorkflowExecutionID: "01KEX", WorkflowID: "01KWF", WorkflowVersion: 1, OrganizationID: "org-a", WorkspaceID: "ws",
		Status: cardflow.ExecWaiting, CreatedOn: ms, ModifiedOn: ms,
		WorkflowDetails: cardflow.WorkflowDetails{WorkflowName: "wf", WorkflowSteps: []cardflow.Step{{ID: "approve", Name: "Manager approval", Type: cardflow.StepCard}}},
		State:           cardflow.ExecutionState{StepID: "approve", Phase: cardflow.PhaseWaiting, ProcessID: "PO-1", Wait: 1},
	}
	if err := store.StartExecution(ctx, ex, &cardflow.Process{OrganizationID: "org-a", ProcessID: "PO-1", WorkflowID: "01KWF", ExecutionID: "01KEX", CreatedOn: ms}, nil); err != nil {
		t.Fatal(err)
	}
	p, err := store.GetProcess(ctx, "org-a", "PO-1")
	if err != nil {
		t.Fatal(err)
	}
	p.Waits, p.Wait, p.Closed = 1, &cardflow.Wait{Seq: 1, StepID: "approve", OpenedOn: ms}, closed
	if err := store.PutProcess(ctx, p); err != nil {
		t.Fatal(err)
	}
	// The bot's conversations: one of org-a, where its card is, and one of
	// org-b.
	for org, id := range map[string]string{"org-a": "19:approvers@thread.tacv2", "org-b": "19:b-team@thread.tacv2"} {
		c := &cardflow.TeamsConversation{OrganizationID: org, ConversationID: id, Source: cardflow.ConversationByAdmin, RegisteredOn: ms}
		if err := store.RegisterConversation(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	return a
}

// claimedBy returns the actor whose answer claimed wait 1, or "".
func (a *answering) claimedBy(t *testing.T) string {
	t.Helper()
	p, err := a.store.GetProcess(context.Background(), "org-a", "PO-1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Wait == nil || p.Wait.Resume == nil {
		return ""
	}
	return p.Wait.Resume.Actor
}

func cardAnswer(org string) *cardflow.CardAnswer {
	return &cardflow.CardAnswer{OrganizationID: org, ProcessID: "PO-1", ExecutionID: "01KEX", Wait: 1, Actor: "teams:aad-ann",
		Payload: map[string]any{"decision": "approve", "responder": map[string]any{"name": "Ann Example"}}}
}

func TestAnswerBotActivity(t *testing.T) {
	conv := cardflow.BotConversation{ServiceURL: "https://smba.trafficmanager.net/emea/", ConversationID: "19:approvers@thread.tacv2", TenantID: "tenant-1"}
	execute := &cardflow.BotActivity{Type: "invoke", Conversation: conv, Answer: cardAnswer("org-a"), ReplyWithCard: true}
	submit := &cardflow.BotActivity{Type: "message", Conversation: conv, ReplyToID: "activity-1", Answer: cardAnswer("org-a")}
	ended := "Your answer was not recorded: the execution 01KEX of this card has ended; there is nothing to answer."
	for _, tt := range []struct {
		name   string
		bot    *bot
		closed bool
		// want is the output; with a Reply, that reply's outcome.
		want     app.BotActivityOutput
		outcome  *cardflow.CardOutcome
		replaced bool
		code     string
		claimant string
		logged   string
	}{
		{name: "no card answer", bot: &bot{activity: &cardflow.BotActivity{Type: "conversationUpdate", Conversation: conv}},
			logged: `msg="Teams conversation" type=conversationUpdate service_url=https://smba.trafficmanager.net/emea/ conversation_id=19:approvers@thread.tacv2 tenant_id=tenant-1`},
		{name: "Action.Execute", bot: &bot{activity: execute}, want: app.BotActivityOutput{Answered: true, Resumed: true},
			outcome: &cardflow.CardOutcome{Title: "Manager approval"}, claimant: "teams:aad-ann"},
		{name: "Action.Submit", bot: &bot{activity: submit}, want: app.BotActivityOutput{Answered: true, Resumed: true},
			replaced: true, claimant: "teams:aad-ann"},
		{name: "Action.Submit, the card stays", bot: &bot{activity: submit, replaceErr: cardflow.Errorf(cardflow.EUNAVAILABLE, "the Bot Connector is down")},
			want: app.BotActivityOutput{Answered: true, Resumed: true}, replaced: true, claimant: "teams:aad-ann",
			logged: `msg="replacing an answered card failed" error="cardflow: UNAVAILABLE: the Bot Connector is down"`},
		{name: "Action.Execute after the end", bot: &bot{activity: execute}, closed: true, want: app.BotActivityOutput{Answered: true},
			outcome: &cardflow.CardOutcome{Note: ended}},
		{name: "Action.Submit after the end", bot: &bot{activity: submit}, closed: true, want: app.BotActivityOutput{Answered: true}, replaced: true},
		{name: "another organization's card", bot: &bot{activity: &cardflow.BotActivity{Type: "invoke", Answer: cardAnswer("org-b"), ReplyWithCard: true}},
			code: cardflow.ENOTFOUND},
		{name: "org-a's card in org-b's conversation", bot: &bot{activity: &cardflow.BotActivity{Type: "invoke", Answer: cardAnswer("org-a"), ReplyWithCard: true,
			Conversation: cardflow.BotConversation{ServiceURL: conv.ServiceURL, ConversationID: "19:b-team@thread.tacv2"}}},
			code: cardflow.ENOTFOUND},
		{name: "refused activity", bot: &bot{err: cardflow.Errorf(cardflow.EUNAUTHORIZED, "Bot Framework token: not a JWT")}, code: cardflow.EUNAUTHORIZED},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newAnswering(t, tt.closed, app.Deps{BotVerifier: tt.bot, BotReplier: tt.bot})
			got, err := a.svc.AnswerBotActivity(context.Background(), "Bearer token", []byte("{}"))
			if tt.code != "" {
				if cardflow.ErrorCode(err) != tt.code {
					t.Fatalf("got %+v, %v, want %s", got, err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var outcome *cardflow.CardOutcome
			if got.Reply != nil {
				o := got.Reply["outcome"].(cardflow.CardOutcome)
				outcome = &o
			}
			if got.Answered != tt.want.Answered || got.Resumed != tt.want.Resumed || (outcome == nil) != (tt.outcome == nil) {
				t.Fatalf("got %+v, want %+v with a reply: %v", got, tt.want, tt.outcome != nil)
			}
			if outcome != nil && (outcome.Title != tt.outcome.Title || outcome.Note != tt.outcome.Note || (outcome.Decision == nil) != (tt.claimant == "")) {
				t.Errorf("reply's outcome: got %+v, want %+v decided by %q", outcome, tt.outcome, tt.claimant)
			}
			if got := len(tt.bot.replaced); got != map[bool]int{true: 1}[tt.replaced] {
				t.Fatalf("got %d replaced cards, want replaced: %v", got, tt.replaced)
			}
			if tt.replaced {
				r := tt.bot.replaced[0]
				if r.conv != conv || r.activityID != "activity-1" {
					t.Errorf("replaced %s in %+v, want activity-1 in %+v", r.activityID, r.conv, conv)
				}
				if tt.closed && r.outcome.Note != ended || !tt.closed && (r.outcome.Decision == nil || r.outcome.Decision.Actor != tt.claimant) {
					t.Errorf("replacing card's outcome: got %+v", r.outcome)
				}
			}
			if got := a.claimedBy(t); got != tt.claimant {
				t.Errorf("wait claimed by %q, want %q", got, tt.claimant)
			}
			if tt.logged != "" && !strings.Contains(a.log.String(), tt.logged) {
				t.Errorf("log: got %s, want it to contain %s", a.log, tt.logged)
			}
		})
	}
}

func TestAnswerLink(t *testing.T) {
	a := newAnswering(t, false, app.Deps{LinkVerifier: link{answer: cardAnswer("org-a")}})
	ctx := context.Background()
	// Opening the link, as a scanner does, any number of times, only shows
	// the confirmation form.
	for range 3 {
		page, err := a.svc.OpenLink(ctx, "token")
		if err != nil || page.Confirmation != "confirm:token" || page.StepName != "Manager approval" || page.Decided != nil {
			t.Fatalf("open: got %+v, %v, want the confirmation form of Manager approval", page, err)
		}
	}
	if got := a.claimedBy(t); got != "" || a.runner.n != 0 {
		t.Fatalf("after opening: the wait was claimed by %q, %d wakes; want nothing changed", got, a.runner.n)
	}
	if _, err := a.svc.AnswerLink(ctx, "token", "confirm:other"); cardflow.ErrorCode(err) != cardflow.EINVALID {
		t.Fatalf("a confirmation of another link: got %v, want EINVALID", err)
	}
	page, err := a.svc.AnswerLink(ctx, "token", "confirm:token")
	if err != nil || !page.Recorded || page.StepName != "Manager approval" {
		t.Fatalf("got %+v, %v, want the wait of Manager approval claimed", page, err)
	}
	res := page.Decided
	want := map[string]any{"decision": "approve", "responder": map[string]any{"name": "Ann Example"}, "source": cardflow.SourceTeams}
	if res.Actor != "teams:aad-ann" || res.Source != cardflow.SourceTeams || !reflect.DeepEqual(res.Payload, want) {
		t.Errorf("resume: got %+v, want ann's answer %v", res, want)
	}
	// A replayed POST, and a later opening, show the answer and record
	// nothing more.
	again, err := a.svc.AnswerLink(ctx, "token", "confirm:token")
	if err != nil || again.Recorded || again.Decided == nil || again.Decided.ReceivedOn != res.ReceivedOn {
		t.Errorf("replay: got %+v, %v, want the first answer, not recorded again", again, err)
	}
	opened, err := a.svc.OpenLink(ctx, "token")
	if err != nil || opened.Confirmation != "" || opened.Decided == nil {
		t.Errorf("open after the answer: got %+v, %v, want the decision and no form", opened, err)
	}
	if a.runner.n != 1 {
		t.Errorf("got %d wakes, want 1", a.runner.n)
	}

	for _, tt := range []struct {
		name string
		link link
		code string
	}{
		{"refused link", link{err: cardflow.Errorf(cardflow.EINVALID, "the response link expired on ...")}, cardflow.EINVALID},
		{"a verifier that fails", link{err: errors.New("disk full")}, cardflow.EINTERNAL},
	} {
		a := newAnswering(t, false, app.Deps{LinkVerifier: tt.link})
		if _, err := a.svc.OpenLink(ctx, "token"); cardflow.ErrorCode(err) != tt.code {
			t.Errorf("%s: open: got %v, want %s", tt.name, err, tt.code)
		}
		if _, err := a.svc.AnswerLink(ctx, "token", "confirm:token"); cardflow.ErrorCode(err) != tt.code {
			t.Errorf("%s: got %v, want %s", tt.name, err, tt.code)
		}
		if got := a.claimedBy(t); got != "" {
			t.Errorf("%s: the wait was claimed by %q", tt.name, got)
		}
	}
}
