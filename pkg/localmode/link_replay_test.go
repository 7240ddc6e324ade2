package localmode_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/sample"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/teams"
)

// approvalWriteCounter is writeCounter that also counts approval writes
// and the bytes of the executions written.
type approvalWriteCounter struct {
	*writeCounter
	executionBytes int
}

func (s *approvalWriteCounter) PutApproval(ctx context.Context, a *cardflow.Approval) error {
	s.count("PutApproval")
	return s.Store.PutApproval(ctx, a)
}

func (s *approvalWriteCounter) CreateApproval(ctx context.Context, a *cardflow.Approval) error {
	s.count("CreateApproval")
	return s.Store.CreateApproval(ctx, a)
}

func (s *approvalWriteCounter) PutExecution(ctx context.Context, e *cardflow.Execution) error {
	b, _ := json.Marshal(e)
	s.mu.Lock()
	s.executionBytes += len(b)
	s.mu.Unlock()
	return s.writeCounter.PutExecution(ctx, e)
}

// TestLinkReplayWritesNothing replays a used personal link 100 times, once
// its answer is recorded and again once the approval is decided: the page
// shows what stands and the store takes no write. Before, each replay was
// a refusal that rewrote the execution with one more event (100 replays of
// a finished execution: 100 writes, megabytes).
func TestLinkReplayWritesNothing(t *testing.T) { onEachStore(t, linkReplayWritesNothing) }

func linkReplayWritesNothing(t *testing.T, open func(t *testing.T, outbox *boltstore.Store) cardflow.Store) {
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
	if err != nil {
		t.Fatal(err)
	}
	store := &approvalWriteCounter{writeCounter: &writeCounter{Store: open(t, bolt), writes: map[string]int{}}}
	srv := httptest.NewUnstartedServer(nil)
	srv.Start()
	t.Cleanup(srv.Close)
	const signing = "link-replay-signing-key-0123456789abcdef"
	st, err := localmode.NewStack(store, bolt, localmode.Config{
		Log:   slog.New(slog.DiscardHandler),
		Teams: teams.Config{PublicURL: srv.URL, SigningSecret: "teams-signing"},
		Secrets: secrets.Env{Lookup: func(name string) (string, bool) {
			return signing, name == secrets.EnvName(secrets.DeploymentKey("teams-signing"))
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(st.Service, httpapi.KeyAuthenticator{Service: st.Service}, httpapi.WithTeams(), httpapi.WithApprovalLinks())
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = api
	org := "org-" + cardflow.NewID(time.Now())
	ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: org, WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "root",
	})
	ids, err := sample.Load(ctx, st.Service)
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.Service.Trigger(ctx, app.TriggerInput{WorkflowID: ids.TwoApproverWorkflowID,
		Body: []byte(`{"requester": "cy@example.com", "item": "Workstation", "amount": 4800}`)})
	if err != nil {
		t.Fatal(err)
	}
	approvalID := cardflow.ApprovalIDOf(out.ExecutionID, 1)
	await := func(what string, done func() bool) {
		t.Helper()
		testenv.WaitFor(t, what, done)
	}
	// The wait opens on the process record once the cards went out: no
	// write of the engine's is left for the replays to meet.
	await("the approval's wait", func() bool {
		p, err := store.GetProcess(ctx, org, out.ExecutionID)
		return err == nil && p.Wait != nil
	})
	await("the approval's cards", func() bool {
		a, err := store.GetApproval(ctx, org, approvalID)
		return err == nil && len(a.Sent) == len(sample.Approvers)
	})

	post := func(path string, form url.Values) string {
		t.Helper()
		res, err := http.PostForm(srv.URL+path, form)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("POST %s: got %d %s", path, res.StatusCode, b)
		}
		return string(b)
	}
	// Each approver's Approve link and its confirmation form, as an admin
	// gets them.
	forms := map[string]url.Values{}
	for _, who := range sample.Approvers {
		links, err := st.Service.IssueApprovalLinks(ctx, app.IssueLinksInput{ApprovalID: approvalID, Approver: who})
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.Get(links.Links[0].URL)
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(res.Body)
		res.Body.Close()
		form := url.Values{}
		for _, m := range regexp.MustCompile(`<input type="hidden" name="(\w+)" value="([^"]*)">`).FindAllStringSubmatch(string(page), -1) {
			form.Set(m[1], m[2])
		}
		if form.Get("confirmation") == "" {
			t.Fatalf("%s's page: got %s, want a confirmation form", who, page)
		}
		forms[who] = form
	}

	ann, dan := sample.Approvers[0], sample.Approvers[1]
	replay := func(phase, want string, who ...string) {
		t.Helper()
		store.taken()
		store.executionBytes = 0
		for range 100 {
			for _, w := range who {
				if got := post("/v1/teams/respond", forms[w]); !strings.Contains(got, want) {
					want = "" // say it once
					t.Errorf("%s, %s's replay: got %s, want it to say what stands", phase, w, got)
				}
			}
		}
		if got := store.taken(); len(got) != 0 {
			t.Errorf("%s: 100 replays wrote %v (%d bytes of executions), want nothing", phase, got, store.executionBytes)
		}
	}
	if got := post("/v1/teams/respond", forms[ann]); !strings.Contains(got, "Your answer (approve) is recorded") {
		t.Fatalf("ann approves: got %s", got)
	}
	replay("answered, not decided", "You answered (approve) on", ann)
	if got := post("/v1/teams/respond", forms[dan]); !strings.Contains(got, "the approval is approved") {
		t.Fatalf("dan approves: got %s", got)
	}
	await("the end", func() bool {
		ex, err := store.GetExecution(ctx, org, ids.TwoApproverWorkflowID, out.ExecutionID)
		return err == nil && ex.Status == cardflow.ExecSucceeded
	})
	replay("decided and finished", "This approval was approved", ann, dan)
}
