// Package samlocal prepares `sam local invoke`: it seeds a store (DynamoDB
// Local) with the records the sample events refer to, and renders one
// sample event per Lambda function, as events/<function>.json holds them.
// The store assigns workflow and card ids, so the events are written after
// the records they name.
package samlocal

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/ebscheduler"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/localrunner"
	"github.com/cardflow/cardflow/pkg/localscheduler"
	"github.com/cardflow/cardflow/pkg/sample"
	"github.com/cardflow/cardflow/pkg/sfnrunner"
	"github.com/cardflow/cardflow/pkg/teams"
)

// The tenant of the sample records.
const (
	Organization = "sam-local-org"
	Workspace    = "sam-local-workspace"
)

// Fixture names the seeded records the events refer to.
// The sample's Teams conversations, both registered for Organization.
const (
	BotConversation     = "19:approvers@thread.tacv2"
	ChannelConversation = "19:sample-channel@thread.tacv2"
	BotTenant           = "72f988bf-86f1-41af-91ab-2d7cd011db47"
)

type Fixture struct {
	sample.IDs
	// Key is an API key with every scope, for the authorizer's event. It
	// acts for Person, a listed approver of ApprovalID.
	Key    string
	Actor  string
	Person string
	// ApprovalID is open on an execution of TwoApproverWorkflowID waiting
	// at its approval step, which Person and OtherApprover must approve.
	ApprovalID string
	// PanelExecutionID and PanelProcessID are the execution that waits.
	PanelExecutionID, PanelProcessID string
	// WaitingExecutionID waits at the approval card for ProcessID.
	WaitingExecutionID string
	ProcessID          string
	// Two more executions wait at the approval card: the Teams events
	// answer LinkProcessID's through a response link and BotProcessID's
	// through the bot.
	LinkExecutionID, LinkProcessID string
	BotExecutionID, BotProcessID   string
	// TimedOutExecutionID ended TIMED_OUT at the approval card, which
	// nobody answered; redriveExecution asks again.
	TimedOutExecutionID string
	// BotToken is the Bot Framework JWT of the bot's event, issued for
	// BotServiceURL (default DefaultBotServiceURL). Only Microsoft signs
	// tokens a deployment accepts: without one the event carries none.
	BotToken, BotServiceURL string
	// SeededAt is when the records were written.
	SeededAt time.Time
	// BulkOperationID is a bulk operation that found nothing to do.
	BulkOperationID string
}

// Seed writes the sample records to store.
func Seed(ctx context.Context, store cardflow.Store, now time.Time) (*Fixture, error) {
	// Publishing the sample's scheduled workflow records its schedule; this
	// process only seeds, so the scheduler is never started and fires none.
	sched, err := localscheduler.New(func(context.Context, *cardflow.Schedule, time.Time) error { return nil })
	if err != nil {
		return nil, err
	}
	// The sample execution is a run of the approval workflow: an engine and
	// an in-process runner run it on store, its card going to a log, as
	// on AWS without Teams, that nobody reads here.
	exprs, err := expr.NewEnv()
	if err != nil {
		return nil, err
	}
	eng, err := engine.New(store, lambdamode.LogDeliverer{Log: slog.New(slog.DiscardHandler)}, exprs)
	if err != nil {
		return nil, err
	}
	runner, err := localrunner.New(eng, store)
	if err != nil {
		return nil, err
	}
	defer runner.Close()
	svc, err := app.New(store, app.Deps{Scheduler: sched, CardChecker: cards.Checker{}, Checker: eng, Runner: runner})
	if err != nil {
		return nil, err
	}
	key, k, err := svc.CreateKey(ctx, app.CreateKeyInput{OrganizationID: Organization, WorkspaceID: Workspace, Scopes: cardflow.AllScopes, Name: "sam-local", Person: SamplePerson})
	if err != nil {
		return nil, err
	}
	f := &Fixture{Key: key, Actor: k.Person, Person: k.Person, SeededAt: now}
	admin := &cardflow.Principal{OrganizationID: Organization, WorkspaceID: Workspace, Scopes: cardflow.AllScopes, Actor: f.Actor, Person: f.Person}
	if f.IDs, err = sample.Load(cardflow.NewContextWithPrincipal(ctx, admin), svc); err != nil {
		return nil, err
	}
	if err := f.seedApproval(cardflow.NewContextWithPrincipal(ctx, admin), svc); err != nil {
		return nil, err
	}
	for _, w := range []struct{ ex, proc *string }{
		{&f.WaitingExecutionID, &f.ProcessID}, {&f.LinkExecutionID, &f.LinkProcessID}, {&f.BotExecutionID, &f.BotProcessID},
	} {
		if *w.ex, *w.proc, err = f.seedWaiting(ctx, svc, now); err != nil {
			return nil, err
		}
	}
	bulk := &cardflow.BulkOperation{
		OrganizationID: Organization, WorkspaceID: Workspace, BulkOperationID: cardflow.NewID(now), Action: cardflow.BulkCancel,
		Filter: cardflow.ExecutionFilter{ProcessID: "PO-none", CreatedBefore: now.UnixMilli()}, Status: cardflow.BulkSucceeded,
		Failures: []cardflow.BulkItem{}, CreatedBy: f.Actor, CreatedOn: now.UnixMilli(), ModifiedOn: now.UnixMilli(),
	}
	if _, err := store.CreateBulkOperation(ctx, bulk); err != nil {
		return nil, err
	}
	f.BulkOperationID = bulk.BulkOperationID
	if f.TimedOutExecutionID, err = f.seedTimedOut(ctx, svc, now); err != nil {
		return nil, err
	}
	// The bot's event clicks in BotConversation, which must be the
	// organization's; the conversation events register and remove
	// ChannelConversation.
	for _, id := range []string{BotConversation, ChannelConversation} {
		c := &cardflow.TeamsConversation{OrganizationID: Organization, ConversationID: id, ServiceURL: DefaultBotServiceURL,
			TenantID: BotTenant, Source: cardflow.ConversationByAdmin, RegisteredBy: f.Actor, RegisteredOn: now.UnixMilli()}
		if err := store.RegisterConversation(ctx, c); err != nil {
			return nil, err
		}
	}
	// removeDelegation's event removes this one.
	ds := &cardflow.Delegations{OrganizationID: Organization, Items: []cardflow.Delegation{{
		DelegationID: SampleDelegation, Approver: OtherApprover, Delegate: "erin@example.com",
		StartsOn: now.Add(30 * 24 * time.Hour).UnixMilli(), EndsOn: now.Add(37 * 24 * time.Hour).UnixMilli(), CreatedBy: f.Actor, CreatedOn: now.UnixMilli(),
	}}}
	if err := store.PutDelegations(ctx, ds); err != nil {
		return nil, err
	}
	return f, nil
}

// SampleDelegation is the id of the delegation Seed writes.
const SampleDelegation = "01JSAMPLEDE1EGAT10N0000000"

// SamplePerson is who the sample key acts for; OtherApprover is the
// second approver of the sample's two-approver workflow.
var (
	SamplePerson  = sample.Approvers[0]
	OtherApprover = sample.Approvers[1]
)

// seedApproval runs the sample's two-approver workflow to its approval
// step, which records the open approval.
func (f *Fixture) seedApproval(ctx context.Context, svc *app.Service) error {
	out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: f.TwoApproverWorkflowID, Version: 1,
		Body: []byte(`{"requester": "bob@example.com", "item": "Server rack", "amount": 12800}`)})
	if err != nil {
		return fmt.Errorf("sample approval: %w", err)
	}
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		ex, err := svc.GetExecution(wait, f.TwoApproverWorkflowID, out.ExecutionID)
		if err != nil {
			return fmt.Errorf("sample approval: %w", err)
		}
		if ex.Status == cardflow.ExecWaiting {
			f.ApprovalID = cardflow.ApprovalIDOf(ex.WorkflowExecutionID, ex.State.Wait)
			f.PanelExecutionID, f.PanelProcessID = ex.WorkflowExecutionID, ex.State.ProcessID
			return nil
		}
		if !ex.Open() {
			return fmt.Errorf("sample approval: execution %s ended as %s before its approval", ex.WorkflowExecutionID, ex.Status)
		}
		select {
		case <-wait.Done():
			return fmt.Errorf("sample approval: execution %s does not wait: %w", ex.WorkflowExecutionID, wait.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// seedWaiting records an execution of the approval workflow that waits at
// its card for a process id, as the engine leaves one, and returns both.
func (f *Fixture) seedWaiting(ctx context.Context, svc *app.Service, now time.Time) (executionID, processID string, err error) {
	const version = 2
	admin := cardflow.NewContextWithPrincipal(ctx, &cardflow.Principal{OrganizationID: Organization, WorkspaceID: Workspace, Scopes: cardflow.AllScopes, Actor: f.Actor})
	w, err := svc.GetWorkflow(admin, f.ApprovalWorkflowID, version)
	if err != nil {
		return "", "", err
	}
	ms := now.UnixMilli()
	id := cardflow.NewID(now)
	pid := "PO-" + strings.ToLower(id[len(id)-8:])
	input := map[string]any{"requester": "ann@example.com", "item": "Workstation", "amount": 4800.0}
	ex := &cardflow.Execution{
		WorkflowExecutionID: id, WorkflowID: w.WorkflowID, WorkflowVersion: w.WorkflowVersion,
		OrganizationID: Organization, WorkspaceID: Workspace,
		WorkflowCurrentState: "Manager approval", WorkflowTriggerType: cardflow.TriggerRequest, Status: cardflow.ExecWaiting,
		WorkflowEventLog: cardflow.EventLog{Total: 2, Events: []cardflow.Event{
			{At: ms, Type: cardflow.EventStarted, Message: "by " + f.Actor},
			{At: ms, Type: cardflow.EventWaiting, StepID: "approve", Step: "Manager approval", Message: "card delivered"},
		}},
		// What the card step recorded as it sent its card: a response
		// link's page shows that card.
		CondensedLogs: map[string]cardflow.StepLog{"approve": {
			Input:  map[string]any{"card_id": f.ApprovalCardID, "card_version": 1, "data": input},
			Status: cardflow.ExecWaiting, StartedOn: ms,
		}},
		WorkflowInputPayload: input,
		WorkflowDetails:      cardflow.WorkflowDetails{WorkflowName: w.WorkflowName, WorkflowSteps: w.WorkflowSteps, WorkflowConnections: w.WorkflowConnections},
		CreatedOn:            ms, ModifiedOn: ms,
		State: cardflow.ExecutionState{StepID: "approve", Phase: cardflow.PhaseWaiting, ProcessID: pid, Outputs: map[string]any{}, Wait: 1},
	}
	proc := &cardflow.Process{
		OrganizationID: Organization, ProcessID: pid, WorkflowID: w.WorkflowID, ExecutionID: id,
		Wait: &cardflow.Wait{Seq: 1, StepID: "approve", OpenedOn: ms}, Waits: 1, CreatedOn: ms,
	}
	return id, pid, svc.Store().StartExecution(ctx, ex, proc, nil)
}

// What the Teams functions need under sam local (env.local.json): the name
// of the signing secret, and as the deployment's secret of that name
// (CARDFLOW_DEPLOYMENT_SECRET_TEAMS_SIGNING, or cardflow/deployment/teams-signing
// in Secrets Manager) the sample key that signs the link and the action
// data of the sample events. A deployment makes a key of its own.
const (
	SigningSecret = "teams-signing"
	SigningKey    = "sam-local-teams-signing-key-0123456789"
	// DefaultBotServiceURL is the Bot Connector of the bot's event.
	DefaultBotServiceURL = "https://smba.trafficmanager.net/emea/"
)

// The functions that are not endpoints, by the names of their events.
const (
	Authorizer     = "authorizer"
	ScheduleTarget = "scheduleTarget"
	Housekeeping   = "housekeeping"
	BulkOperations = "bulkOperations"
	// TeamsRespondConfirm is teamsRespond's second event: the POST of the
	// confirmation form the page of its first (GET) shows.
	TeamsRespondConfirm = "teamsRespondConfirm"
	Advance             = "advance"
	Park                = "park"
	PublishEvents       = "publishEvents"
	// Console is the browser console's function, asked for its page.
	Console = "console"
)

// Events renders the sample event of every function, by function name.
func Events(f *Fixture) (map[string]any, error) {
	auth := map[string]any{
		"principalId":                  f.Actor,
		lambdamode.ContextOrganization: Organization,
		lambdamode.ContextWorkspace:    Workspace,
		lambdamode.ContextScopes:       strings.Join(cardflow.AllScopes, ","),
		lambdamode.ContextActor:        f.Actor,
		lambdamode.ContextPerson:       f.Person,
	}
	get := func(ep httpapi.Endpoint, query map[string]string) request { return at(ep, 0, nil).with(query, nil) }
	post := func(ep httpapi.Endpoint, body any) request { return at(ep, 0, nil).with(nil, body) }
	wf, card := f.ApprovalWorkflowID, f.ApprovalCardID
	reqs := []request{
		get(httpapi.GetPendingApprovals, map[string]string{"approver": f.Person, "limit": "5"}),
		get(httpapi.GetApprovalStats, map[string]string{"from": "2026-11-01", "to": "2026-11-30"}),
		get(httpapi.GetApprovalById, map[string]string{"approval_id": f.ApprovalID}),
		post(httpapi.AnswerApproval, map[string]any{"approval_id": f.ApprovalID, "decision": "approve", "comment": "Within budget"}),
		// The step allows no reassignment: the function answers 409.
		post(httpapi.ReassignApproval, map[string]any{"approval_id": f.ApprovalID, "to": "erin@example.com"}),
		// The key's person is away in January 2030.
		post(httpapi.SetDelegation, map[string]any{"delegate": "erin@example.com", "starts_on": 1893456000000, "ends_on": 1894060800000}),
		get(httpapi.GetDelegations, nil),
		post(httpapi.RemoveDelegation, map[string]any{"delegation_id": SampleDelegation}),
		// An admin decides what the other approver has yet to answer.
		post(httpapi.OverrideApproval, map[string]any{"approval_id": f.ApprovalID, "decision": "approve", "reason": "The approver is away; approved by the team lead"}),
		get(httpapi.GetWorkflowExecutionById, map[string]string{"workflow_id": wf, "workflow_execution_id": f.ExecutionID}),
		get(httpapi.WaitForExecution, map[string]string{"workflow_id": wf, "workflow_execution_id": f.ExecutionID, "until": "final", "timeout": "5"}),
		get(httpapi.GetWorkflowExecutionHistory, map[string]string{"workflow_id": wf, "limit": "5"}),
		get(httpapi.GetOrganizationExecutions, map[string]string{"limit": "5"}),
		get(httpapi.SearchExecutions, map[string]string{"workflow_id": wf, "limit": "5"}),
		// A bulk cancel of what process id PO-none started: nothing.
		post(httpapi.StartBulkOperation, map[string]any{"action": "cancel", "process_id": "PO-none", "client_token": "sam-local"}),
		get(httpapi.GetBulkOperation, map[string]string{"bulk_operation_id": f.BulkOperationID}),
		get(httpapi.GetWorkflowById, map[string]string{"workflow_id": wf, "workflow_version": "2"}),
		get(httpapi.GetOrganizationWorkflows, map[string]string{"limit": "5"}),
		get(httpapi.GetWorkflowSchemaById, map[string]string{"workflow_id": wf, "workflow_version": "2"}),
		post(httpapi.SaveWorkflow, map[string]any{
			"workflow_name": "Leave request",
			"workflow_steps": []any{
				map[string]any{"id": "start", "name": "Request", "type": "trigger", "config": map[string]any{"kind": "REQUEST"}},
				map[string]any{"id": "long", "name": "Long leave?", "type": "condition", "config": map[string]any{}},
				map[string]any{"id": "ask", "name": "Manager approval", "type": "card", "config": map[string]any{"card_id": card, "data": map[string]any{"requester": "{{ input.name }}"}, "timeout": "P2D"}},
				map[string]any{"id": "done", "name": "Done", "type": "end", "config": map[string]any{"status": "SUCCEEDED"}},
			},
			"workflow_connections": []any{
				map[string]any{"from": "start", "to": "long"},
				map[string]any{"from": "long", "to": "ask", "when": "input.days > 3"},
				map[string]any{"from": "long", "to": "done"},
				map[string]any{"from": "ask", "to": "done"},
			},
		}),
		post(httpapi.PublishWorkflow, map[string]any{"workflow_id": wf, "workflow_version": 2}),
		get(httpapi.GetCardById, map[string]string{"card_id": card, "card_version": "1"}),
		get(httpapi.GetLatestActiveCard, map[string]string{"card_id": card}),
		get(httpapi.GetOrganizationCards, map[string]string{"limit": "5"}),
		post(httpapi.SaveCard, map[string]any{
			"card_name": "Leave request",
			"card_payload": map[string]any{
				"type": "AdaptiveCard", "version": "1.5",
				"body":    []any{map[string]any{"type": "TextBlock", "text": "${name} asks for ${days} days off", "wrap": true}},
				"actions": []any{map[string]any{"type": "Action.Submit", "title": "Approve", "data": map[string]any{"decision": "approve"}}},
			},
		}),
		post(httpapi.PublishCard, map[string]any{"card_id": card, "card_version": 2}),
		post(httpapi.PreviewCard, map[string]any{"card_id": card, "card_version": 2,
			"data": map[string]any{"requester": "Ann Example", "item": "Laptop", "amount": 1840}}),
		at(httpapi.TriggerWorkflow, 1, map[string]string{"workflow_id": wf, "workflow_version": "2"}).
			with(map[string]string{"process_id": "PO-sample-trigger"}, map[string]any{"requester": "ann@example.com", "item": "Workstation", "amount": 4800}),
		get(httpapi.GetWorkflowSchedule, map[string]string{"workflow_id": f.ScheduleWorkflowID}),
		post(httpapi.ToggleScheduledWorkflow, map[string]any{"workflow_id": f.ScheduleWorkflowID, "workflow_version": 1, "action": "PAUSE"}),
		post(httpapi.CancelExecution, map[string]any{"workflow_id": wf, "workflow_execution_id": f.WaitingExecutionID, "reason": "order withdrawn"}),
		post(httpapi.RedriveExecution, map[string]any{"workflow_id": wf, "workflow_execution_id": f.TimedOutExecutionID}),
		post(httpapi.RegisterConversation, map[string]any{"conversation_id": ChannelConversation,
			"service_url": DefaultBotServiceURL, "tenant_id": BotTenant, "kind": "channel"}),
		get(httpapi.ListConversations, nil),
		post(httpapi.RemoveConversation, map[string]any{"conversation_id": ChannelConversation}),
		at(httpapi.ResumeWorkflow, 0, map[string]string{"action": "resumeworkflow", "process_id": f.ProcessID}).
			with(nil, map[string]any{"source": "TEAMS", "decision": "approve", "comment": "Within budget"}),
	}
	byName := map[string]request{}
	for _, r := range reqs {
		byName[r.endpoint] = r
	}
	out := map[string]any{}
	for _, ep := range httpapi.Endpoints() {
		r, ok := byName[ep.Name]
		if !ok {
			return nil, fmt.Errorf("samlocal: no sample event for %s", ep.Name)
		}
		ev, err := r.event(auth)
		if err != nil {
			return nil, fmt.Errorf("samlocal: %s: %w", ep.Name, err)
		}
		out[ep.Name] = ev
	}
	// The console's page is public: no authorizer context.
	page, err := request{method: "GET", resource: "/console", path: "/console/"}.event(nil)
	if err != nil {
		return nil, fmt.Errorf("samlocal: %s: %w", Console, err)
	}
	out[Console] = page
	teamsReqs, err := f.teamsRequests()
	if err != nil {
		return nil, err
	}
	for _, name := range []string{lambdamode.TeamsMessages, lambdamode.TeamsRespond, TeamsRespondConfirm} {
		// Without the API key authorizer there is no authorizer context.
		if out[name], err = teamsReqs[name].event(nil); err != nil {
			return nil, fmt.Errorf("samlocal: %s: %w", name, err)
		}
	}
	// The authorizer is asked about getWorkflowById's request.
	read := at(httpapi.GetWorkflowById, 0, nil)
	out[Authorizer] = events.APIGatewayCustomAuthorizerRequestTypeRequest{
		Type:       "REQUEST",
		MethodArn:  "arn:aws:execute-api:us-east-1:123456789012:abcdef1234/dev/" + read.method + read.path,
		Resource:   read.resource,
		Path:       read.path,
		HTTPMethod: read.method,
		Headers:    map[string]string{lambdamode.APIKeyHeader: f.Key},
		MultiValueHeaders: map[string][]string{
			lambdamode.APIKeyHeader: {f.Key},
		},
		QueryStringParameters: map[string]string{"workflow_id": wf, "workflow_version": "2"},
		RequestContext: events.APIGatewayCustomAuthorizerRequestTypeRequestContext{
			AccountID: "123456789012", ResourceID: "abc123", Stage: "dev", RequestID: "c6af9ac6-7b61-11e6-9a41-93e8deadbeef",
			ResourcePath: read.resource, HTTPMethod: read.method, APIID: "abcdef1234",
		},
	}
	// What EventBridge Scheduler delivers for the sample's scheduled
	// workflow: the schedule's Input with the run's time filled in.
	out[ScheduleTarget] = ebscheduler.TargetInput{
		OrganizationID: Organization, WorkspaceID: Workspace, WorkflowID: f.ScheduleWorkflowID, WorkflowVersion: 1,
		ScheduledTime: f.SeededAt.UTC().Truncate(time.Minute).Add(time.Minute).Format(time.RFC3339),
	}
	at := f.SeededAt.UTC().Truncate(time.Minute)
	out[Housekeeping] = events.EventBridgeEvent{
		Version: "0", ID: "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa", DetailType: "Scheduled Event", Source: "aws.events",
		AccountID: "123456789012", Time: at, Region: "us-east-1",
		Resources: []string{"arn:aws:events:us-east-1:123456789012:rule/cardflow-dev-HousekeepingFunctionEvery5Minutes"},
		Detail:    json.RawMessage(`{}`),
	}
	// What the executions table's stream passes the publisher: a new
	// outbox item, the started event of the sample execution.
	if out[PublishEvents], err = publishEvent(f, wf); err != nil {
		return nil, err
	}
	out[BulkOperations] = events.EventBridgeEvent{
		Version: "0", ID: "0c5e6a1e-3f1d-4b8e-9a57-6f2d0b9e4c11", DetailType: "Scheduled Event", Source: "aws.events",
		AccountID: "123456789012", Time: at, Region: "us-east-1",
		Resources: []string{"arn:aws:events:us-east-1:123456789012:rule/cardflow-dev-BulkOperationsFunctionEveryMinute"},
		Detail:    json.RawMessage(`{}`),
	}
	// What the runner's state machine passes its tasks for the waiting
	// execution.
	waiting := cardflow.ExecutionRef{OrganizationID: Organization, WorkflowID: wf, ExecutionID: f.WaitingExecutionID}
	out[Advance] = sfnrunner.AdvanceInput{Execution: waiting}
	out[Park] = sfnrunner.ParkInput{
		Execution: waiting, Wait: 1, ProcessID: f.ProcessID, TimeoutSeconds: 172801,
		TaskToken: "AQCEAAAAKgAAAAMAAAAAAAAAAcardflowsamplelocaltasktoken",
	}
	return out, nil
}

// teamsRequests returns what Teams sends the Teams functions: the click of
// an Approve response link, and the bot's Action.Execute of Approve.
func (f *Fixture) teamsRequests() (map[string]request, error) {
	key := []byte(SigningKey)
	link, err := teams.SignLink(key, teams.Ref{
		OrganizationID: Organization, ProcessID: f.LinkProcessID, ExecutionID: f.LinkExecutionID, Wait: 1,
		Choice: map[string]any{"decision": "approve"}, Expires: f.SeededAt.Add(teams.DefaultLinkTTL).Unix(),
	})
	if err != nil {
		return nil, err
	}
	action, err := teams.SignAction(key, teams.Ref{OrganizationID: Organization, ProcessID: f.BotProcessID, ExecutionID: f.BotExecutionID, Wait: 1},
		teams.Offer{Data: map[string]any{"decision": "approve", "verb": "approve"}})
	if err != nil {
		return nil, err
	}
	serviceURL := f.BotServiceURL
	if serviceURL == "" {
		serviceURL = DefaultBotServiceURL
	}
	// TeamsRespond's routes are GET, HEAD and POST of the link's page.
	confirm := at(httpapi.TeamsRespond, 2, nil)
	confirm.form = url.Values{"token": {link}, "confirmation": {teams.SignConfirmation(key, link)}}
	bot := at(httpapi.TeamsMessages, 0, nil).with(nil, map[string]any{
		"type": teams.ActivityInvoke, "name": teams.InvokeCardAction, "id": "f:5486013427548447021", "channelId": "msteams",
		"serviceUrl":   serviceURL,
		"from":         map[string]any{"id": "29:1ann-example", "name": "Ann Example", "aadObjectId": "6d0bd5a8-3a8e-4a4e-9d3c-0c2f8f0a1b2c"},
		"conversation": map[string]any{"id": BotConversation, "tenantId": BotTenant},
		"value": map[string]any{"action": map[string]any{
			"type": "Action.Execute", "verb": "approve", "data": map[string]any{"decision": "approve", teams.DataKey: action},
		}, "trigger": "manual"},
	})
	if f.BotToken != "" {
		bot.headers = map[string]string{"Authorization": "Bearer " + f.BotToken}
	}
	return map[string]request{
		lambdamode.TeamsRespond:  at(httpapi.TeamsRespond, 0, nil).with(map[string]string{"token": link}, nil),
		TeamsRespondConfirm:      confirm,
		lambdamode.TeamsMessages: bot,
	}, nil
}

// request is the part of an API Gateway proxy event that differs between
// endpoints.
type request struct {
	endpoint               string
	method, resource, path string
	pathParams, query      map[string]string
	headers                map[string]string
	body                   any
	form                   url.Values
}

// at is a request of ep's route i, its {name} segments filled from
// params: the route comes from pkg/httpapi's table, as the function's does.
func at(ep httpapi.Endpoint, i int, params map[string]string) request {
	method, resource, _ := strings.Cut(ep.Routes[i], " ")
	path := resource
	for k, v := range params {
		path = strings.ReplaceAll(path, "{"+k+"}", v)
	}
	return request{endpoint: ep.Name, method: method, resource: resource, path: path, pathParams: params}
}

// with returns r with a query and a body.
func (r request) with(query map[string]string, body any) request {
	r.query, r.body = query, body
	return r
}

// event renders a REST API proxy event as API Gateway sends it after the
// authorizer allowed the request.
func (r request) event(auth map[string]any) (events.APIGatewayProxyRequest, error) {
	ev := events.APIGatewayProxyRequest{
		Resource:   r.resource,
		Path:       r.path,
		HTTPMethod: r.method,
		Headers:    map[string]string{"Host": "abcdef1234.execute-api.us-east-1.amazonaws.com", "User-Agent": "curl/8.5.0", "Accept": "*/*"},
		RequestContext: events.APIGatewayProxyRequestContext{
			AccountID: "123456789012", ResourceID: "abc123", Stage: "dev", DomainName: "abcdef1234.execute-api.us-east-1.amazonaws.com",
			RequestID: "c6af9ac6-7b61-11e6-9a41-93e8deadbeef", Protocol: "HTTP/1.1", ResourcePath: r.resource, Path: "/dev" + r.path,
			Authorizer: auth, HTTPMethod: r.method, APIID: "abcdef1234",
			Identity: events.APIGatewayRequestIdentity{SourceIP: "203.0.113.7", UserAgent: "curl/8.5.0"},
		},
		PathParameters:        r.pathParams,
		QueryStringParameters: r.query,
	}
	if len(r.query) > 0 {
		ev.MultiValueQueryStringParameters = map[string][]string{}
		for k, v := range r.query {
			ev.MultiValueQueryStringParameters[k] = []string{v}
		}
	}
	for k, v := range r.headers {
		ev.Headers[k] = v
	}
	ev.MultiValueHeaders = map[string][]string{}
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return ev, err
		}
		ev.Body = string(b)
		ev.Headers["Content-Type"] = "application/json"
	}
	if r.form != nil {
		ev.Body = r.form.Encode()
		ev.Headers["Content-Type"] = "application/x-www-form-urlencoded"
	}
	for k, v := range ev.Headers {
		ev.MultiValueHeaders[k] = []string{v}
	}
	return ev, nil
}

// WriteEvents writes each event to dir/<function>.json.
func WriteEvents(dir string, evs map[string]any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, ev := range evs {
		b, err := json.MarshalIndent(ev, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}
