package samlocal_test

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/cardflow/cardflow/cmd/cardflow-samevents/internal/samlocal"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/answers"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/teams"
)

// TestTeamsRespondAnswersApprovals: on AWS the teamsRespond function, built
// as its main.go builds it, answers an approval through an approver's
// personal link and refuses a link naming someone not listed, each with
// its event in the audit trail, within the permissions template.yaml
// grants it.
func TestTeamsRespondAnswersApprovals(t *testing.T) {
	ep := endpoint(t)
	_, prefix := newTables(t, ep)
	perms := newPermissions(t, ep, prefix)
	env, err := lambdamode.LoadEnv(func(k string) string {
		return map[string]string{
			lambdamode.EnvDynamoDBEndpoint: perms.endpoint(t, lambdamode.TeamsRespond), lambdamode.EnvTablePrefix: prefix,
			lambdamode.EnvLogLevel: "ERROR", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(secrets.EnvName(secrets.DeploymentKey(samlocal.SigningSecret)), samlocal.SigningKey)
	env.Teams = teams.Config{SigningSecret: samlocal.SigningSecret}
	// No answer here decides, so the runner is never called.
	env.StateMachineARN = "arn:aws:states:us-east-1:123456789012:stateMachine:cardflow-test-runner"
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	ctx := context.Background()
	store, err := (lambdamode.Env{TablePrefix: prefix, DynamoDBEndpoint: ep, Region: "us-east-1"}).OpenStore(log)
	if err != nil {
		t.Fatal(err)
	}
	f, err := samlocal.Seed(ctx, store, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h, err := answers.NewEndpointFunction(env, log, lambdamode.TeamsRespond, app.Deps{CardReader: cards.Reader{}})
	if err != nil {
		t.Fatal(err)
	}
	key := []byte(samlocal.SigningKey)
	confirm := func(who string) string {
		t.Helper()
		link, err := teams.SignLink(key, teams.Ref{
			OrganizationID: samlocal.Organization, ProcessID: f.PanelProcessID, ExecutionID: f.PanelExecutionID, Wait: 1,
			Choice: map[string]any{"decision": "approve"}, Title: "Approve", Expires: time.Now().Add(time.Hour).Unix(), Who: who,
		})
		if err != nil {
			t.Fatal(err)
		}
		form := url.Values{"token": {link}, "confirmation": {teams.SignConfirmation(key, link)}}
		got, err := h.Handle(ctx, events.APIGatewayProxyRequest{
			HTTPMethod: "POST", Resource: "/v1/teams/respond", Path: "/v1/teams/respond", Body: form.Encode(),
			Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
		})
		if err != nil || got.StatusCode != 200 {
			t.Fatalf("%s confirms: got %d %s, %v; want 200", who, got.StatusCode, got.Body, err)
		}
		return got.Body
	}
	if got := confirm(samlocal.OtherApprover); !strings.Contains(got, "Your answer (approve) is recorded; the approval waits for the other approvers.") {
		t.Errorf("dan: got %s, want his answer recorded", got)
	}
	if got := confirm("eve@example.com"); !strings.Contains(got, "you are not an approver") {
		t.Errorf("eve: got %s, want a refusal", got)
	}
	ex, err := store.GetExecution(ctx, samlocal.Organization, f.TwoApproverWorkflowID, f.PanelExecutionID)
	if err != nil {
		t.Fatal(err)
	}
	var audit []string
	for _, ev := range ex.WorkflowEventLog.Events {
		if strings.HasPrefix(ev.Type, "Approval") {
			audit = append(audit, ev.Type+" "+ev.Actor)
		}
	}
	want := []string{"ApprovalOpened ", cardflow.EventApprovalAnswered + " " + samlocal.OtherApprover, cardflow.EventApprovalRefused + " eve@example.com"}
	if strings.Join(audit, "|") != strings.Join(want, "|") {
		t.Errorf("audit trail: got %q, want %q", audit, want)
	}
	perms.checkTemplate(t)
}
