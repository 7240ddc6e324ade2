package samlocal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/cardflow/cardflow/cmd/cardflow-samevents/internal/samlocal"
	"github.com/cardflow/cardflow/internal/fakes/ebschedulertest"
	"github.com/cardflow/cardflow/internal/fakes/sfnfake"
	"github.com/cardflow/cardflow/internal/fakes/teamstest"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
	"github.com/cardflow/cardflow/pkg/ebscheduler"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/advance"
	"github.com/cardflow/cardflow/pkg/lambdamode/answers"
	"github.com/cardflow/cardflow/pkg/lambdamode/runner"
	"github.com/cardflow/cardflow/pkg/lambdamode/schedules"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/sfnrunner"
	"github.com/cardflow/cardflow/pkg/teams"
)

// endpoint returns DynamoDB Local's address (testenv.DynamoDB).
func endpoint(t *testing.T) string {
	t.Helper()
	return testenv.DynamoDB(t)
}

func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }

// newTables creates tables of their own for one test and deletes them at
// its end.
func newTables(t *testing.T, ep string) (*dynamodb.Client, string) {
	t.Helper()
	ctx := context.Background()
	prefix := "cardflow-samlocal-" + strings.ToLower(cardflow.NewID(time.Now())) + "-"
	client, err := dynamoclient.New(ctx, ep, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dynamostore.CreateTables(ctx, client, prefix); err != nil {
		t.Fatalf("DynamoDB at %s: %v", ep, err)
	}
	t.Cleanup(func() {
		for _, tb := range dynamostore.Tables(prefix) {
			client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: tb.Input.TableName})
		}
	})
	return client, prefix
}

// newEndpoint builds an endpoint function's handler as its main.go does,
// with EventBridge Scheduler at the stand-in's URL.
func newEndpoint(t *testing.T, env lambdamode.Env, log *slog.Logger, name, schedulerURL string, atSFN func(*sfn.Options)) *lambdamode.Endpoint {
	t.Helper()
	i := slices.IndexFunc(httpapi.Endpoints(), func(ep httpapi.Endpoint) bool { return ep.Name == name })
	if i < 0 {
		t.Fatalf("the API has no endpoint %s", name)
	}
	ep := httpapi.Endpoints()[i]
	if name == "triggerWorkflow" || name == "resumeWorkflow" || name == "cancelExecution" || name == "answerApproval" || name == "reassignApproval" || name == "overrideApproval" || name == "setDelegation" || name == "redriveExecution" {
		h, err := runner.NewEndpointFunction(env, log, ep, atSFN)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return h
	}
	if name == "publishWorkflow" || name == "toggleScheduledWorkflow" {
		h, err := schedules.NewEndpointFunction(env, log, ep, func(o *scheduler.Options) { o.BaseEndpoint = aws.String(schedulerURL) })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return h
	}
	var deps app.Deps
	if name == "saveWorkflow" {
		exprs, err := expr.NewEnv()
		if err != nil {
			t.Fatal(err)
		}
		checker, err := engine.NewChecker(exprs)
		if err != nil {
			t.Fatal(err)
		}
		deps.Checker = checker
	}
	if name == "saveCard" {
		deps.CardChecker = cards.Checker{}
	}
	h, err := env.NewEndpointFunction(log, ep, deps)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return h
}

// lambdaFunc adapts a handler to a function of the Step Functions
// stand-in, decoding and encoding JSON as the Lambda runtime does.
func lambdaFunc[In, Out any](h func(context.Context, In) (Out, error)) sfnfake.Func {
	return func(ctx context.Context, payload []byte) ([]byte, error) {
		var in In
		if err := json.Unmarshal(payload, &in); err != nil {
			return nil, err
		}
		out, err := h(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

// decode reads an event the way the Lambda runtime does: JSON into the
// handler's input type.
func decode[T any](t *testing.T, name string, ev any) T {
	t.Helper()
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var v T
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// TestEvents feeds every sample event to its function's handler, built as
// main.go builds it, over DynamoDB Local with the sample records seeded,
// and checks the answers.
func TestEvents(t *testing.T) {
	ep := endpoint(t)
	_, prefix := newTables(t, ep)
	env, err := lambdamode.LoadEnv(func(k string) string {
		return map[string]string{
			lambdamode.EnvDynamoDBEndpoint:  ep,
			lambdamode.EnvTablePrefix:       prefix,
			lambdamode.EnvLogLevel:          "ERROR",
			"AWS_ACCESS_KEY_ID":             "AKIDEXAMPLE",
			"AWS_SECRET_ACCESS_KEY":         "secret",
			lambdamode.EnvScheduleGroup:     "default",
			lambdamode.EnvScheduleTargetARN: "arn:aws:lambda:us-east-1:123456789012:function:cardflow-test-schedule-target",
			lambdamode.EnvSchedulerRoleARN:  "arn:aws:iam::123456789012:role/cardflow-test-scheduler",
		}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	// Microsoft's side of Teams, and the secrets the Teams settings name.
	fake := teamstest.New(t)
	t.Setenv(secrets.EnvName(secrets.DeploymentKey(samlocal.SigningSecret)), samlocal.SigningKey)
	t.Setenv(secrets.EnvName(secrets.DeploymentKey("bot-secret")), teamstest.AppSecret)
	env.Teams = teams.Config{
		SigningSecret: samlocal.SigningSecret, AppID: teamstest.AppID, AppSecret: "bot-secret",
		TokenURL: fake.TokenURL(), OpenIDMetadataURL: fake.MetadataURL(), ServiceHosts: []string{fake.Host()},
	}
	env.TeamsOptions = []teams.Option{teams.WithHTTPClient(fake.Client())}
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	ctx := context.Background()
	// Each function reaches DynamoDB through a proxy that notes the
	// permissions its requests need, checked against template.yaml at the end.
	perms := newPermissions(t, ep, prefix)
	envFor := func(fn string) lambdamode.Env {
		e := env
		e.DynamoDBEndpoint = perms.endpoint(t, fn)
		return e
	}
	standin := ebschedulertest.New()
	defer standin.Close()
	// Step Functions runs the runner's definition with Advance and Park
	// bound to the handlers the advance and park functions build.
	const advanceARN = "arn:aws:lambda:us-east-1:123456789012:function:cardflow-test-advance"
	const parkARN = "arn:aws:lambda:us-east-1:123456789012:function:cardflow-test-park"
	def, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "statemachine", "runner.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	var handlers *sfnrunner.Handlers
	var parkHandlers *sfnrunner.Parker
	sfnStandin, err := sfnfake.New(sfnfake.Config{
		Definition:    def,
		Substitutions: map[string]string{"AdvanceFunctionArn": advanceARN, "ParkFunctionArn": parkARN},
		Functions: map[string]sfnfake.Func{
			advanceARN: lambdaFunc(func(ctx context.Context, in sfnrunner.AdvanceInput) (sfnrunner.AdvanceOutput, error) {
				return handlers.Advance(ctx, in)
			}),
			parkARN: lambdaFunc(func(ctx context.Context, in sfnrunner.ParkInput) (any, error) { return nil, parkHandlers.Park(ctx, in) }),
		},
		Name: "cardflow-test-runner",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sfnStandin.Close()
	env.StateMachineARN = sfnStandin.StateMachineARN
	atSFN := func(o *sfn.Options) { o.BaseEndpoint = aws.String(sfnStandin.URL) }
	if handlers, err = advance.NewHandlers(envFor("advance"), log, atSFN); err != nil {
		t.Fatal(err)
	}
	if parkHandlers, err = runner.NewParkFunction(envFor("park"), log, atSFN); err != nil {
		t.Fatal(err)
	}
	run, err := runner.New(env, log, atSFN)
	if err != nil {
		t.Fatal(err)
	}
	store, err := env.OpenStore(log)
	if err != nil {
		t.Fatal(err)
	}
	f, err := samlocal.Seed(ctx, store, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	f.BotServiceURL = fake.ServiceURL()
	f.BotToken = fake.Token(t, time.Now(), f.BotServiceURL)
	evs, err := samlocal.Events(f)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("authorizer", func(t *testing.T) {
		h, err := envFor("authorizer").NewAuthorizerFunction(log)
		if err != nil {
			t.Fatal(err)
		}
		req := decode[events.APIGatewayCustomAuthorizerRequestTypeRequest](t, samlocal.Authorizer, evs[samlocal.Authorizer])
		got, err := h.Handle(ctx, req)
		if err != nil {
			t.Fatalf("Handle: %v", err)
		}
		st := got.PolicyDocument.Statement
		if len(st) != 1 || st[0].Effect != "Allow" || !slices.Equal(st[0].Resource, []string{"arn:aws:execute-api:us-east-1:123456789012:abcdef1234/dev/*"}) {
			t.Errorf("policy = %+v, want Allow on every method of the stage", got.PolicyDocument)
		}
		want := map[string]any{"organization_id": samlocal.Organization, "workspace_id": samlocal.Workspace, "scopes": "read,execute,admin", "actor": f.Actor}
		for k, v := range want {
			if got.Context[k] != v {
				t.Errorf("context[%s] = %v, want %v", k, got.Context[k], v)
			}
		}
		req.Headers[lambdamode.APIKeyHeader] = f.Key + "x"
		if _, err := h.Handle(ctx, req); err == nil || err.Error() != "Unauthorized" {
			t.Errorf("a wrong key: err = %v, want Unauthorized", err)
		}
	})

	t.Run("scheduleTarget", func(t *testing.T) {
		h, err := schedules.NewTargetFunction(envFor("scheduleTarget"), log, run)
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.Handle(ctx, decode[ebscheduler.TargetInput](t, samlocal.ScheduleTarget, evs[samlocal.ScheduleTarget]))
		if err != nil || !got.Started || got.ExecutionID == "" {
			t.Errorf("got %+v, %v; want a started execution", got, err)
		}
	})

	// The expected answer of each endpoint, in the order they run: resume
	// before cancel, which closes the process id.
	for _, c := range []struct {
		name   string
		status int
		// body holds a substring of the answer.
		body string
	}{
		{"getWorkflowExecutionById", 200, `"workflow_execution_id":"` + f.ExecutionID + `"`},
		{"waitForExecution", 200, `"workflow_execution_id":"` + f.ExecutionID + `"`},
		{"getWorkflowExecutionHistory", 200, `"workflow_execution_id":"` + f.ExecutionID + `"`},
		{"getOrganizationExecutions", 200, `"count":5`},
		{"searchExecutions", 200, `"workflow_execution_id":"` + f.ExecutionID + `"`},
		{"startBulkOperation", 200, `"status":"RUNNING"`},
		{"getBulkOperation", 200, `"status":"SUCCEEDED"`},
		{"getWorkflowById", 200, `"workflow_status_version":"ACTIVE_2"`},
		{"getOrganizationWorkflows", 200, `"count":5`},
		{"getWorkflowSchemaById", 200, `"workflow_mock_payload"`},
		{"saveWorkflow", 200, `"workflow_name":"Leave request"`},
		{"publishWorkflow", 200, `"latest":"true"`},
		{"getCardById", 200, `"status_version":"ACTIVE-1"`},
		{"getLatestActiveCard", 200, `"card_version":2`},
		{"getOrganizationCards", 200, `"count":5`},
		{"saveCard", 200, `"card_name":"Leave request"`},
		{"publishCard", 200, `"status_version":"ACTIVE-2"`},
		{"getPendingApprovals", 200, `"approval_id":"` + f.ApprovalID + `"`},
		{"getApprovalById", 200, `"status":"PENDING"`},
		// The key's person approves; the other approver has yet to.
		{"answerApproval", 200, `"decision":"approve","comment":"Within budget","channel":"api"`},
		// The step allows reassignment, but not of a part already answered.
		{"reassignApproval", 409, `you already answered approval`},
		{"setDelegation", 200, `"delegate":"erin@example.com"`},
		{"getDelegations", 200, `"delegation_id":"` + samlocal.SampleDelegation + `"`},
		{"removeDelegation", 200, `"delegation_id":"` + samlocal.SampleDelegation + `"`},
		// An admin decides without the approver who has yet to answer.
		{"overrideApproval", 200, `"status":"OVERRIDDEN"`},
		{"triggerWorkflow", 200, `"service_execution_id"`},
		{"toggleScheduledWorkflow", 200, `"status":"PAUSED"`},
		{"resumeWorkflow", 200, `"resumed":true`},
		{"cancelExecution", 200, `"status":"CANCELLED"`},
		// The card that timed out is asked again.
		{"redriveExecution", 200, `"status":"RUNNING"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newEndpoint(t, envFor(c.name), log, c.name, standin.URL, atSFN)
			got, err := h.Handle(ctx, decode[events.APIGatewayProxyRequest](t, c.name, evs[c.name]))
			if err != nil {
				t.Fatalf("Handle: %v", err)
			}
			if got.StatusCode != c.status || !strings.Contains(got.Body, c.body) {
				t.Errorf("got %d %s\nwant %d with %s", got.StatusCode, got.Body, c.status, c.body)
			}
			if ct := got.MultiValueHeaders["Content-Type"]; !slices.Equal(ct, []string{"application/json"}) {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
		})
	}

	// Teams answers the two executions waiting for it: each function, built
	// as its main.go builds it, checks what came and claims the wait.
	// Opening the response link (GET, HEAD, again and again, as link
	// scanners do) only shows its confirmation page: the wait stays open.
	t.Run("teamsRespond opens", func(t *testing.T) {
		h, err := answers.NewEndpointFunction(envFor(lambdamode.TeamsRespond), log, lambdamode.TeamsRespond, app.Deps{CardReader: cards.Reader{}}, atSFN)
		if err != nil {
			t.Fatal(err)
		}
		for _, method := range []string{"GET", "HEAD", "GET", "HEAD"} {
			req := decode[events.APIGatewayProxyRequest](t, lambdamode.TeamsRespond, evs[lambdamode.TeamsRespond])
			req.HTTPMethod, req.RequestContext.HTTPMethod = method, method
			got, err := h.Handle(ctx, req)
			if err != nil || got.StatusCode != 200 {
				t.Fatalf("%s: got %d %s, %v; want 200", method, got.StatusCode, got.Body, err)
			}
			if method == "GET" && (!strings.Contains(got.Body, "<p>Purchase request</p><p>Requester: ann@example.com</p>") || !strings.Contains(got.Body, `name="confirmation"`)) {
				t.Errorf("GET: got %s, want the card's text and the confirmation form", got.Body)
			}
			if method == "HEAD" && got.Body != "" {
				t.Errorf("HEAD: got body %q, want none", got.Body)
			}
		}
		if p, err := store.GetProcess(ctx, samlocal.Organization, f.LinkProcessID); err != nil || p.Wait == nil || p.Wait.Resume != nil {
			t.Errorf("process %s after opening its link: %+v, %v; want its wait open", f.LinkProcessID, p, err)
		}
	})
	for _, c := range []struct {
		name, event, processID string
		status                 int
		contentType            string
		body                   string
	}{
		{lambdamode.TeamsRespond, samlocal.TeamsRespondConfirm, f.LinkProcessID, 200, "text/html; charset=utf-8", "Thank you: your answer was recorded."},
		{lambdamode.TeamsMessages, lambdamode.TeamsMessages, f.BotProcessID, 200, "application/json", `"type":"application/vnd.microsoft.card.adaptive"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := answers.NewEndpointFunction(envFor(c.name), log, c.name, app.Deps{}, atSFN)
			if err != nil {
				t.Fatal(err)
			}
			req := decode[events.APIGatewayProxyRequest](t, c.event, evs[c.event])
			got, err := h.Handle(ctx, req)
			if err != nil {
				t.Fatalf("Handle: %v", err)
			}
			if got.StatusCode != c.status || !strings.Contains(got.Body, c.body) {
				t.Errorf("got %d %s\nwant %d with %s", got.StatusCode, got.Body, c.status, c.body)
			}
			if ct := got.MultiValueHeaders["Content-Type"]; !slices.Equal(ct, []string{c.contentType}) {
				t.Errorf("Content-Type = %q, want %s", ct, c.contentType)
			}
			p, err := store.GetProcess(ctx, samlocal.Organization, c.processID)
			if err != nil || p.Wait == nil || p.Wait.Resume == nil || p.Wait.Resume.Payload.(map[string]any)["decision"] != "approve" {
				t.Errorf("process %s: %+v, %v; want its wait claimed by decision approve", c.processID, p, err)
			}
			// Without its proof (a token, a signature) nothing is answered.
			if c.name == lambdamode.TeamsMessages {
				delete(req.Headers, "Authorization")
				delete(req.MultiValueHeaders, "Authorization")
			} else {
				req.Body = strings.Replace(req.Body, "token=", "token=x", 1)
			}
			if got, err := h.Handle(ctx, req); err != nil || (got.StatusCode != 401 && got.StatusCode != 400) {
				t.Errorf("without proof: got %d %s, %v; want 401 or 400", got.StatusCode, got.Body, err)
			}
		})
	}

	// The runner's tasks for the waiting execution, which the loop above
	// resumed and then cancelled: Advance sees it cancelled, and Park ends
	// its own task, which the stand-in does not know.
	t.Run("advance", func(t *testing.T) {
		got, err := handlers.Advance(ctx, decode[sfnrunner.AdvanceInput](t, samlocal.Advance, evs[samlocal.Advance]))
		if err != nil || got.Status != cardflow.ExecCancelled {
			t.Errorf("got %+v, %v; want status CANCELLED", got, err)
		}
	})
	t.Run("park", func(t *testing.T) {
		if err := parkHandlers.Park(ctx, decode[sfnrunner.ParkInput](t, samlocal.Park, evs[samlocal.Park])); err != nil {
			t.Errorf("Park: %v", err)
		}
	})

	// The triggered execution ran on the state machine to its card and
	// waits there for the process id the event gave.
	testenv.WaitFor(t, "the triggered execution to park at its card", func() bool {
		p, err := store.GetProcess(ctx, samlocal.Organization, "PO-sample-trigger")
		return err == nil && p.Wait != nil && p.Wait.Token != ""
	})

	// The schedule's state went to EventBridge Scheduler.
	if sc, ok := standin.Schedule("default", ebscheduler.Name(samlocal.Organization, f.ScheduleWorkflowID)); !ok || sc.State != "DISABLED" {
		t.Errorf("after PAUSE the stand-in holds %+v (found %v), want a DISABLED schedule", sc, ok)
	}

	checkPublishEvents(t, ctx, envFor(samlocal.PublishEvents), log, evs[samlocal.PublishEvents])

	t.Run("housekeeping", func(t *testing.T) {
		h, err := envFor("housekeeping").NewHousekeepingFunction(log, run)
		if err != nil {
			t.Fatal(err)
		}
		got, err := h.Handle(ctx, decode[events.EventBridgeEvent](t, samlocal.Housekeeping, evs[samlocal.Housekeeping]))
		if err != nil || got != (app.HousekeepReport{}) {
			t.Errorf("got %+v, %v; want nothing to do", got, err)
		}
	})

	t.Run("bulkOperations", func(t *testing.T) {
		w, err := envFor("bulkOperations").NewBulkWorkerFunction(log, run)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Handle(ctx, decode[events.EventBridgeEvent](t, samlocal.BulkOperations, evs[samlocal.BulkOperations])); err != nil {
			t.Errorf("got %v, want the bulk operation of startBulkOperation worked", err)
		}
	})

	perms.checkTemplate(t)
}

// TestCommittedEvents checks events/: one file per function, each an event
// of its function's input type for the same route as Events renders.
func TestCommittedEvents(t *testing.T) {
	f := &samlocal.Fixture{Key: "cfk_000000000000_x", Actor: samlocal.SamplePerson, Person: samlocal.SamplePerson}
	want, err := samlocal.Events(f)
	if err != nil {
		t.Fatal(err)
	}
	// What an event asks apart from the seeded records' ids (the same
	// when rendered for other records) is what cardflow-samevents writes: a
	// request edited in Events and not rewritten in events/ is caught.
	other := otherRecords(*f)
	wantOther, err := samlocal.Events(&other)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "..", "..", "events")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(p), ".json"))
	}
	var wantNames []string
	for n := range want {
		wantNames = append(wantNames, n)
	}
	slices.Sort(wantNames)
	if !slices.Equal(names, wantNames) {
		t.Errorf("events/ holds %v, want %v", names, wantNames)
	}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var raw any
		if err := json.Unmarshal(b, &raw); err != nil {
			t.Fatalf("events/%s.json: %v", name, err)
		}
		switch name {
		case samlocal.ScheduleTarget:
			if got := decode[ebscheduler.TargetInput](t, name, raw); got.OrganizationID != samlocal.Organization || got.WorkflowVersion != 1 {
				t.Errorf("events/%s.json: %+v, want the sample's scheduled workflow", name, got)
			}
			continue
		case samlocal.Advance:
			if got := decode[sfnrunner.AdvanceInput](t, name, raw); got.Execution.OrganizationID != samlocal.Organization {
				t.Errorf("events/%s.json: %+v, want an execution of %s", name, got, samlocal.Organization)
			}
			continue
		case samlocal.Park:
			if got := decode[sfnrunner.ParkInput](t, name, raw); got.TaskToken == "" || got.Wait != 1 {
				t.Errorf("events/%s.json: %+v, want a task token for wait 1", name, got)
			}
			continue
		case samlocal.PublishEvents:
			if got := decode[events.DynamoDBEvent](t, name, raw); len(got.Records) != 1 || got.Records[0].EventName != "INSERT" {
				t.Errorf("events/%s.json: %+v, want one INSERT of an outbox item", name, got)
			}
			continue
		case samlocal.Housekeeping, samlocal.BulkOperations:
			if got := decode[events.EventBridgeEvent](t, name, raw); got.DetailType != "Scheduled Event" {
				t.Errorf("events/%s.json: detail-type %q, want Scheduled Event", name, got.DetailType)
			}
			continue
		}
		if name == samlocal.Authorizer {
			got := decode[events.APIGatewayCustomAuthorizerRequestTypeRequest](t, name, raw)
			if got.Type != "REQUEST" || !strings.HasPrefix(got.Headers[lambdamode.APIKeyHeader], "cfk_") {
				t.Errorf("events/%s.json: type %q, x-api-key %q; want a REQUEST with a key", name, got.Type, got.Headers[lambdamode.APIKeyHeader])
			}
			continue
		}
		got := decode[events.APIGatewayProxyRequest](t, name, raw)
		w := want[name].(events.APIGatewayProxyRequest)
		if name != samlocal.Console {
			checkRoute(t, name, got)
		}
		if name == lambdamode.TeamsMessages || name == lambdamode.TeamsRespond || name == samlocal.TeamsRespondConfirm || name == samlocal.Console {
			// Teams calls these without an API key, and a browser opens
			// the console without one: no authorizer context.
			if got.Resource != w.Resource || got.HTTPMethod != w.HTTPMethod || got.RequestContext.Authorizer != nil {
				t.Errorf("events/%s.json: %s %s with authorizer %v, want %s %s without", name, got.HTTPMethod, got.Resource, got.RequestContext.Authorizer, w.HTTPMethod, w.Resource)
			}
			continue
		}
		if wo := wantOther[name].(events.APIGatewayProxyRequest); w.Body == wo.Body && got.Body != w.Body {
			t.Errorf("events/%s.json: body %q, want %q (`go run ./cmd/cardflow-samevents` rewrites events/)", name, got.Body, w.Body)
		}
		if wo := wantOther[name].(events.APIGatewayProxyRequest); maps.Equal(w.QueryStringParameters, wo.QueryStringParameters) && !maps.Equal(got.QueryStringParameters, w.QueryStringParameters) {
			t.Errorf("events/%s.json: queryStringParameters %v, want %v (`go run ./cmd/cardflow-samevents` rewrites events/)", name, got.QueryStringParameters, w.QueryStringParameters)
		}
		if got.Resource != w.Resource || got.HTTPMethod != w.HTTPMethod || got.RequestContext.Authorizer["organization_id"] != samlocal.Organization {
			t.Errorf("events/%s.json: %s %s for %v, want %s %s for %s", name, got.HTTPMethod, got.Resource, got.RequestContext.Authorizer["organization_id"], w.HTTPMethod, w.Resource, samlocal.Organization)
		}
		// API Gateway sends each query parameter twice, and the route
		// in the request context: an event hand-edited in one place only
		// is not one it sends.
		if got.RequestContext.ResourcePath != got.Resource {
			t.Errorf("events/%s.json: requestContext.resourcePath %q, want the resource %q", name, got.RequestContext.ResourcePath, got.Resource)
		}
		if len(got.MultiValueQueryStringParameters) != len(got.QueryStringParameters) {
			t.Errorf("events/%s.json: multiValueQueryStringParameters %v, want those of queryStringParameters %v", name, got.MultiValueQueryStringParameters, got.QueryStringParameters)
		}
		for k, v := range got.QueryStringParameters {
			if mv := got.MultiValueQueryStringParameters[k]; !slices.Equal(mv, []string{v}) {
				t.Errorf("events/%s.json: multiValueQueryStringParameters[%s] = %q, want [%q]", name, k, mv, v)
			}
		}
	}
}

// checkRoute fails unless a committed event hits a route of its endpoint
// in pkg/httpapi's table: its method and resource are one of the
// endpoint's routes, and its path is the resource with its {name}
// segments filled from the path parameters.
func checkRoute(t *testing.T, name string, ev events.APIGatewayProxyRequest) {
	t.Helper()
	endpoints := append(httpapi.Endpoints(), httpapi.TeamsEndpoints()...)
	if name == samlocal.TeamsRespondConfirm {
		name = httpapi.TeamsRespond.Name
	}
	i := slices.IndexFunc(endpoints, func(ep httpapi.Endpoint) bool { return ep.Name == name })
	if i < 0 {
		t.Errorf("events/%s.json: no endpoint %s in pkg/httpapi's table", name, name)
		return
	}
	if route := ev.HTTPMethod + " " + ev.Resource; !slices.Contains(endpoints[i].Routes, route) {
		t.Errorf("events/%s.json: %s, want one of the endpoint's routes %v", name, route, endpoints[i].Routes)
	}
	path := ev.Resource
	for k, v := range ev.PathParameters {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	if path != ev.Path || strings.Contains(path, "{") {
		t.Errorf("events/%s.json: path %s with parameters %v, want the resource %s filled", name, ev.Path, ev.PathParameters, ev.Resource)
	}
}

// otherRecords returns f with every string it names (ids, key, people)
// and the seeding time changed.
func otherRecords(f samlocal.Fixture) samlocal.Fixture {
	var set func(v reflect.Value)
	set = func(v reflect.Value) {
		for i := range v.NumField() {
			switch fv := v.Field(i); fv.Kind() {
			case reflect.String:
				fv.SetString("other-" + v.Type().Field(i).Name)
			case reflect.Struct:
				if fv.Type() != reflect.TypeFor[time.Time]() {
					set(fv)
				}
			}
		}
	}
	set(reflect.ValueOf(&f).Elem())
	f.SeededAt = f.SeededAt.Add(time.Hour)
	return f
}
