package lambdamode

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
)

// TestWaitForExecutionFunction runs the waitForExecution function as
// main.go builds it, on DynamoDB Local: it hears of no changes, so it
// polls the store, and answers once another process finished the
// execution. Had it not looked again it would answer RUNNING after 25 s.
func TestWaitForExecutionFunction(t *testing.T) {
	open, prefix := dynamostoretest.Tables(t)
	store := open(t)
	env := Env{Region: "us-east-1", DynamoDBEndpoint: os.Getenv("DYNAMODB_ENDPOINT"), TablePrefix: prefix,
		AccessKeyID: "local", SecretAccessKey: "local"}
	h, err := env.NewEndpointFunction(slog.New(slog.NewTextHandler(io.Discard, nil)), httpapi.WaitForExecution, app.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now().UnixMilli()
	ex := &cardflow.Execution{WorkflowExecutionID: cardflow.NewID(time.Now()), WorkflowID: cardflow.NewID(time.Now()), WorkflowVersion: 1,
		OrganizationID: "org-a", WorkspaceID: "ws-a", Status: cardflow.ExecRunning, WorkflowTriggerType: "REQUEST", CreatedOn: now, ModifiedOn: now}
	if err := store.CreateExecution(ctx, ex); err != nil {
		t.Fatal(err)
	}
	request := func(org string, query map[string]string) events.APIGatewayProxyRequest {
		q := map[string]string{"workflow_id": ex.WorkflowID, "workflow_execution_id": ex.WorkflowExecutionID}
		for k, v := range query {
			q[k] = v
		}
		return events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/v1/workflows/waitForExecution", QueryStringParameters: q,
			RequestContext: events.APIGatewayProxyRequestContext{Authorizer: map[string]any{
				ContextOrganization: org, ContextWorkspace: "ws", ContextScopes: "read", ContextActor: "test"}}}
	}
	status := func(resp events.APIGatewayProxyResponse) string {
		var body struct{ Item struct{ Status string } }
		json.Unmarshal([]byte(resp.Body), &body)
		return body.Item.Status
	}

	if got, err := h.Handle(ctx, request("org-b", nil)); err != nil || got.StatusCode != 404 {
		t.Errorf("another organization: got %d %s, %v; want 404", got.StatusCode, got.Body, err)
	}
	if got, err := h.Handle(ctx, request("org-a", map[string]string{"timeout": "0"})); err != nil || got.StatusCode != 200 || status(got) != cardflow.ExecRunning {
		t.Errorf("timeout=0: got %d %s, %v; want 200 RUNNING at once", got.StatusCode, got.Body, err)
	}
	if got, err := h.Handle(ctx, request("org-a", map[string]string{"timeout": "30"})); err != nil || got.StatusCode != 400 {
		t.Errorf("timeout=30: got %d %s, %v; want 400", got.StatusCode, got.Body, err)
	}

	answer := make(chan events.APIGatewayProxyResponse, 1)
	go func() {
		got, err := h.Handle(ctx, request("org-a", map[string]string{"until": "final", "timeout": "25"}))
		if err != nil {
			t.Error(err)
		}
		answer <- got
	}()
	ex.Status = cardflow.ExecSucceeded
	ex.ModifiedOn++
	if err := store.PutExecution(ctx, ex); err != nil {
		t.Fatal(err)
	}
	if got := <-answer; got.StatusCode != 200 || status(got) != cardflow.ExecSucceeded {
		t.Errorf("until=final: got %d %s, want 200 SUCCEEDED", got.StatusCode, got.Body)
	}
}
