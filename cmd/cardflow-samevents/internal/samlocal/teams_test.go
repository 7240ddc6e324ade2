package samlocal_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cardflow/cardflow/cmd/cardflow-samevents/internal/samlocal"
	"github.com/cardflow/cardflow/internal/fakes/teamstest"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/advance"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/sfnrunner"
	"github.com/cardflow/cardflow/pkg/teams"
)

// startedRuns stands in for the Step Functions runner where only the
// executions it is asked to start matter.
type startedRuns struct {
	mu   sync.Mutex
	refs []cardflow.ExecutionRef
}

func (r *startedRuns) Start(_ context.Context, ref cardflow.ExecutionRef) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refs = append(r.refs, ref)
	return nil
}
func (r *startedRuns) Wake(context.Context, cardflow.ExecutionRef, *cardflow.Wait) error { return nil }
func (r *startedRuns) Stop(context.Context, cardflow.ExecutionRef) error                 { return nil }

// TestAdvanceDeliversToTeams runs the Advance function, built as its
// main.go builds it from the environment the template sets, on an
// execution whose workflow delivers by Teams webhook: the card goes to the
// webhook with its buttons turned into response links on the public URL.
func TestAdvanceDeliversToTeams(t *testing.T) {
	ep := endpoint(t)
	_, prefix := newTables(t, ep)
	fake := teamstest.New(t)
	t.Setenv(secrets.EnvName(secrets.DeploymentKey(samlocal.SigningSecret)), samlocal.SigningKey)
	t.Setenv(secrets.EnvName(secrets.OrganizationKey(samlocal.Organization, "approvals-hook")), fake.WebhookURL())
	env, err := lambdamode.LoadEnv(func(k string) string {
		return map[string]string{
			lambdamode.EnvDynamoDBEndpoint:   ep,
			lambdamode.EnvTablePrefix:        prefix,
			lambdamode.EnvLogLevel:           "ERROR",
			"AWS_ACCESS_KEY_ID":              "AKIDEXAMPLE",
			"AWS_SECRET_ACCESS_KEY":          "secret",
			lambdamode.EnvPublicURL:          "https://cardflow.example.com/",
			lambdamode.EnvTeamsSigningSecret: samlocal.SigningSecret,
			lambdamode.EnvTeamsLinkTTL:       "48h",
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	env.TeamsOptions = []teams.Option{teams.WithHTTPClient(fake.Client())}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	ctx := context.Background()
	handlers, err := advance.NewHandlers(env, log)
	if err != nil {
		t.Fatal(err)
	}
	store, err := env.OpenStore(log)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	f, err := samlocal.Seed(ctx, store, now)
	if err != nil {
		t.Fatal(err)
	}
	runs := &startedRuns{}
	exprs, err := expr.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	checker, err := engine.NewChecker(exprs)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := app.New(store, app.Deps{Runner: runs, Checker: checker})
	if err != nil {
		t.Fatal(err)
	}
	admin := cardflow.NewContextWithPrincipal(ctx, &cardflow.Principal{OrganizationID: samlocal.Organization, WorkspaceID: samlocal.Workspace, Scopes: cardflow.AllScopes, Actor: f.Actor})
	wf, err := svc.GetWorkflow(admin, f.ApprovalWorkflowID, 2)
	if err != nil {
		t.Fatal(err)
	}
	draft, err := svc.SaveWorkflow(admin, app.SaveWorkflowInput{
		WorkflowID: wf.WorkflowID, WorkflowName: wf.WorkflowName, WorkflowSteps: wf.WorkflowSteps,
		WorkflowConnections: wf.WorkflowConnections, WorkflowSchema: wf.WorkflowSchema,
		WorkflowIntegrations: map[string]any{"teams": map[string]any{"type": "webhook", "webhook_secret": "approvals-hook"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishWorkflow(admin, draft.WorkflowID, draft.WorkflowVersion); err != nil {
		t.Fatal(err)
	}
	started, err := svc.Trigger(admin, app.TriggerInput{
		WorkflowID: wf.WorkflowID, Version: draft.WorkflowVersion, ProcessID: "PO-teams-on-aws",
		Body: []byte(`{"requester": "ann@example.com", "item": "Workstation", "amount": 4800}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	ref := cardflow.ExecutionRef{OrganizationID: samlocal.Organization, WorkflowID: wf.WorkflowID, ExecutionID: started.ExecutionID}
	if len(runs.refs) != 1 || runs.refs[0] != ref {
		t.Fatalf("the trigger started %v, want %v", runs.refs, ref)
	}

	got, err := handlers.Advance(ctx, sfnrunner.AdvanceInput{Execution: ref})
	if err != nil || got.Status != cardflow.ExecWaiting {
		t.Fatalf("Advance: %+v, %v; want status WAITING at the card", got, err)
	}
	posted := fake.Requests("/webhook")
	if len(posted) != 1 {
		t.Fatalf("the webhook got %d posts, want 1", len(posted))
	}
	body, err := json.Marshal(posted[0].Body)
	if err != nil {
		t.Fatal(err)
	}
	const link = `"url":"https://cardflow.example.com/v1/teams/respond?token=`
	if n := strings.Count(string(body), link); n != 2 {
		t.Errorf("the card has %d response links (%s...), want 2 (Approve, Reject): %s", n, link, body)
	}
}
