package lambdamode

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/teams"
)

func TestLoadEnv(t *testing.T) {
	for _, c := range []struct {
		name string
		vars map[string]string
		want Env
		err  string
	}{
		{"on Lambda", map[string]string{"AWS_REGION": "eu-central-1", "CARDFLOW_TABLE_PREFIX": "cardflow-prod-", "LOG_LEVEL": "warn"},
			Env{Region: "eu-central-1", TablePrefix: "cardflow-prod-", LogLevel: slog.LevelWarn}, ""},
		{"defaults", map[string]string{"AWS_REGION": "eu-central-1"}, Env{Region: "eu-central-1", TablePrefix: "cardflow-dev-"}, ""},
		{"DynamoDB Local", map[string]string{"DYNAMODB_ENDPOINT": "http://localhost:8000"},
			Env{Region: "us-east-1", TablePrefix: "cardflow-dev-", DynamoDBEndpoint: "http://localhost:8000"}, ""},
		{"emulators", map[string]string{"DYNAMODB_ENDPOINT": "http://localhost:8000", "AWS_ENDPOINT_URL_SFN": "http://localhost:5000", "AWS_ENDPOINT_URL_SCHEDULER": "http://localhost:5000"},
			Env{Region: "us-east-1", TablePrefix: "cardflow-dev-", DynamoDBEndpoint: "http://localhost:8000",
				StepFunctionsEndpoint: "http://localhost:5000", SchedulerEndpoint: "http://localhost:5000"}, ""},
		{"bad Step Functions endpoint", map[string]string{"AWS_REGION": "eu-central-1", "AWS_ENDPOINT_URL_SFN": "localhost:5000"}, Env{}, `AWS_ENDPOINT_URL_SFN="localhost:5000"`},
		{"bad Scheduler endpoint", map[string]string{"AWS_REGION": "eu-central-1", "AWS_ENDPOINT_URL_SCHEDULER": "ftp://x"}, Env{}, `AWS_ENDPOINT_URL_SCHEDULER="ftp://x"`},
		{"no region", map[string]string{}, Env{}, "AWS_REGION is not set"},
		{"bad level", map[string]string{"AWS_REGION": "eu-central-1", "LOG_LEVEL": "LOUD"}, Env{}, `LOG_LEVEL="LOUD"`},
		{"bad endpoint", map[string]string{"DYNAMODB_ENDPOINT": "localhost:8000"}, Env{}, `DYNAMODB_ENDPOINT="localhost:8000"`},
		{"Teams", map[string]string{"AWS_REGION": "eu-central-1", "CARDFLOW_PUBLIC_URL": "https://cardflow.example.com",
			"CARDFLOW_TEAMS_SIGNING_SECRET": "teams-signing", "CARDFLOW_TEAMS_LINK_TTL": "48h", "CARDFLOW_TEAMS_APP_ID": "app",
			"CARDFLOW_TEAMS_APP_SECRET": "bot-secret", "CARDFLOW_TEAMS_TOKEN_URL": "https://login.example.com/token",
			"CARDFLOW_TEAMS_OPENID_URL": "https://login.example.com/openid", "CARDFLOW_TEAMS_SERVICE_HOSTS": " smba.trafficmanager.net, .botframework.com,"},
			Env{Region: "eu-central-1", TablePrefix: "cardflow-dev-", Teams: teams.Config{
				PublicURL: "https://cardflow.example.com", SigningSecret: "teams-signing", LinkTTL: 48 * time.Hour, AppID: "app",
				AppSecret: "bot-secret", TokenURL: "https://login.example.com/token", OpenIDMetadataURL: "https://login.example.com/openid",
				ServiceHosts: []string{"smba.trafficmanager.net", ".botframework.com"}}}, ""},
		{"Teams tenants", map[string]string{"AWS_REGION": "eu-central-1", "CARDFLOW_TEAMS_TENANTS": "t1=acme, t2=globex"},
			Env{Region: "eu-central-1", TablePrefix: "cardflow-dev-", TeamsTenants: map[string]string{"t1": "acme", "t2": "globex"}}, ""},
		{"a Teams tenant mapped twice", map[string]string{"AWS_REGION": "eu-central-1", "CARDFLOW_TEAMS_TENANTS": "t1=acme,t1=globex"}, Env{},
			"a tenant belongs to one organization"},
		{"Teams defaults", map[string]string{"AWS_REGION": "eu-central-1", "CARDFLOW_PUBLIC_URL": "", "CARDFLOW_TEAMS_SERVICE_HOSTS": ""},
			Env{Region: "eu-central-1", TablePrefix: "cardflow-dev-"}, ""},
		{"http public URL on AWS", map[string]string{"AWS_REGION": "eu-central-1", "CARDFLOW_PUBLIC_URL": "http://cardflow.example.com"}, Env{},
			`CARDFLOW_PUBLIC_URL="http://cardflow.example.com": on AWS the public URL must be https`},
		{"http public URL locally", map[string]string{"DYNAMODB_ENDPOINT": "http://localhost:8000", "CARDFLOW_PUBLIC_URL": "http://localhost:3000"},
			Env{Region: "us-east-1", TablePrefix: "cardflow-dev-", DynamoDBEndpoint: "http://localhost:8000", Teams: teams.Config{PublicURL: "http://localhost:3000"}}, ""},
		{"public URL not a URL", map[string]string{"AWS_REGION": "eu-central-1", "CARDFLOW_PUBLIC_URL": "cardflow.example.com"}, Env{},
			`CARDFLOW_PUBLIC_URL="cardflow.example.com": want an https URL`},
		{"bad link TTL", map[string]string{"AWS_REGION": "eu-central-1", "CARDFLOW_TEAMS_LINK_TTL": "14d"}, Env{}, `CARDFLOW_TEAMS_LINK_TTL="14d": want a positive duration`},
		{"bot without secrets", map[string]string{"AWS_REGION": "eu-central-1", "CARDFLOW_TEAMS_APP_ID": "app", "CARDFLOW_TEAMS_APP_SECRET": "bot-secret"}, Env{},
			"the bot also needs CARDFLOW_TEAMS_APP_SECRET and CARDFLOW_TEAMS_SIGNING_SECRET"},
	} {
		got, err := LoadEnv(func(k string) string { return c.vars[k] })
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v, want one with %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}

func TestAPIWildcard(t *testing.T) {
	for _, c := range []struct{ arn, want string }{
		{"arn:aws:execute-api:eu-central-1:123456789012:abc/prod/GET/v1/workflows/getWorkflowById", "arn:aws:execute-api:eu-central-1:123456789012:abc/prod/*"},
		{"arn:aws:execute-api:eu-central-1:123456789012:abc/prod/POST/v1/workflows/triggerworkflow/01K/2", "arn:aws:execute-api:eu-central-1:123456789012:abc/prod/*"},
	} {
		if got := apiWildcard(c.arn); got != c.want {
			t.Errorf("apiWildcard(%s) = %s, want %s", c.arn, got, c.want)
		}
	}
}

// TestEndpointWithoutAuthorizer checks that a request that reaches an
// endpoint without the authorizer's context is refused, and that an
// endpoint that is not the API's is a construction error.
func TestEndpointWithoutAuthorizer(t *testing.T) {
	env := Env{Region: "us-east-1", DynamoDBEndpoint: "http://127.0.0.1:1", TablePrefix: "t-"}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, err := env.NewEndpointFunction(log, httpapi.GetWorkflowById, app.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		auth map[string]any
	}{
		{"no context", nil},
		{"no organization", map[string]any{"workspace_id": "ws", "scopes": "read"}},
	} {
		got, err := h.Handle(context.Background(), events.APIGatewayProxyRequest{
			HTTPMethod: "GET", Path: "/v1/workflows/getWorkflowById",
			QueryStringParameters: map[string]string{"workflow_id": "x", "workflow_version": "1"},
			RequestContext:        events.APIGatewayProxyRequestContext{Authorizer: c.auth},
		})
		if err != nil || got.StatusCode != 401 || !strings.Contains(got.Body, `"code":"UNAUTHORIZED"`) {
			t.Errorf("%s: got %d %s, %v; want 401 UNAUTHORIZED", c.name, got.StatusCode, got.Body, err)
		}
	}
	// Every endpoint of the API has its function, serving the table's routes.
	for _, ep := range httpapi.Endpoints() {
		if _, err := env.NewEndpointFunction(log, ep, allDeps); err != nil {
			t.Errorf("NewEndpointFunction(%s): %v", ep.Name, err)
		}
	}
	// A value made outside the table has no handler.
	made := httpapi.Endpoint{Name: "getWorkflowById", Routes: httpapi.GetWorkflowById.Routes}
	if _, err := env.NewEndpointFunction(log, made, allDeps); err == nil {
		t.Errorf("NewEndpointFunction(%s %v), not an endpoint of the API: no error", made.Name, made.Routes)
	}
}

// allDeps builds every area of the use cases, over stand-ins that no test
// here calls.
var allDeps = app.Deps{Runner: stillRunner{}, Scheduler: stillScheduler{}, Checker: passChecker{},
	CardChecker: cards.Checker{}, CardExpander: cards.Checker{}}

type stillRunner struct{}

func (stillRunner) Start(context.Context, cardflow.ExecutionRef) error                { return nil }
func (stillRunner) Wake(context.Context, cardflow.ExecutionRef, *cardflow.Wait) error { return nil }
func (stillRunner) Stop(context.Context, cardflow.ExecutionRef) error                 { return nil }

type stillScheduler struct{}

func (stillScheduler) Put(context.Context, *cardflow.Schedule) error    { return nil }
func (stillScheduler) Delete(context.Context, *cardflow.Schedule) error { return nil }

type passChecker struct{}

func (passChecker) Validate(context.Context, *cardflow.Workflow, cardflow.References) error {
	return nil
}

// TestFunctionWithoutWiringFailsAtStart: a function built without what its
// endpoint's use cases need does not start, and says what it lacks, rather
// than answering its requests with 503.
func TestFunctionWithoutWiringFailsAtStart(t *testing.T) {
	env := Env{Region: "us-east-1", DynamoDBEndpoint: "http://127.0.0.1:1", TablePrefix: "t-"}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tt := range []struct {
		ep   httpapi.Endpoint
		want string // in the error; "" for none
	}{
		{httpapi.GetWorkflowById, ""},
		{httpapi.PublishWorkflow, ""},
		{httpapi.TriggerWorkflow, "Runs (it needs a runner)"},
		{httpapi.AnswerApproval, "Runs (it needs a runner)"},
		{httpapi.SaveWorkflow, "WorkflowEditor (it needs a workflow checker)"},
		{httpapi.SaveCard, "CardEditor (it needs a card checker)"},
		{httpapi.PreviewCard, "CardPreviews (it needs a card expander)"},
		{httpapi.ToggleScheduledWorkflow, "Schedules (it needs a scheduler)"},
	} {
		_, err := env.NewEndpointFunction(log, tt.ep, app.Deps{})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: got %v, want no error", tt.ep.Name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: got %v, want an error naming %q", tt.ep.Name, err, tt.want)
		}
	}
	if _, err := env.NewHousekeepingFunction(log, nil); err == nil || !strings.Contains(err.Error(), "runner") {
		t.Errorf("housekeeping without a runner: got %v, want an error naming the runner", err)
	}
	if _, err := env.NewBulkWorkerFunction(log, nil); err == nil || !strings.Contains(err.Error(), "runner") {
		t.Errorf("bulk worker without a runner: got %v, want an error naming the runner", err)
	}
}
