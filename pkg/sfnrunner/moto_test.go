package sfnrunner_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/cardflow/cardflow/internal/mototest"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/sfnrunner"
)

// TestOnMoto creates the runner's state machine in moto's Step Functions
// and drives the runner's calls (StartExecution, SendTaskSuccess,
// StopExecution) against it. moto runs no state (its Lambda tasks would
// need Docker), so executions stay RUNNING until stopped; whole runs are
// proven on aws-local-stepfunctions and the fake.
//
// Where moto and the fake answer differently, AWS's API reference sides
// with the fake (docs/DECISIONS.md): SendTaskSuccess with a token no task
// issued is TaskDoesNotExist or InvalidToken, and a stopped execution's
// DescribeExecution carries the error and cause StopExecution gave. moto
// accepts any token and drops the error and cause; the checks of those
// below say what moto does, so that an upgrade that changes it is noticed.
func TestOnMoto(t *testing.T) {
	ctx := t.Context()
	client := sfn.New(sfn.Options{
		Region: mototest.Region, BaseEndpoint: aws.String(mototest.Endpoint(t)), Credentials: mototest.Credentials(),
	})
	def := strings.NewReplacer("${AdvanceFunctionArn}", advanceARN, "${ParkFunctionArn}", parkARN).Replace(string(definition(t)))
	const role = "arn:aws:iam::123456789012:role/cardflow-runner"
	name := mototest.Name("cardflow-runner")
	created, err := client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String(name), Definition: aws.String(def), RoleArn: aws.String(role), Type: types.StateMachineTypeStandard,
	})
	if err != nil {
		t.Fatalf("CreateStateMachine: %v", err)
	}
	machine := aws.ToString(created.StateMachineArn)
	if want := "arn:aws:states:us-east-1:123456789012:stateMachine:" + name; machine != want {
		t.Errorf("state machine ARN: got %s, want %s", machine, want)
	}
	desc, err := client.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(machine)})
	if err != nil {
		t.Fatalf("DescribeStateMachine: %v", err)
	}
	if aws.ToString(desc.Name) != name || aws.ToString(desc.Definition) != def || aws.ToString(desc.RoleArn) != role ||
		desc.Status != types.StateMachineStatusActive || desc.Type != types.StateMachineTypeStandard {
		t.Errorf("DescribeStateMachine: got %s %s %s %s, want %s, the definition, %s, ACTIVE, STANDARD",
			aws.ToString(desc.Name), aws.ToString(desc.RoleArn), desc.Status, desc.Type, name, role)
	}

	r, err := sfnrunner.New(client, machine, sfnrunner.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ref := cardflow.ExecutionRef{OrganizationID: "acme", WorkflowID: cardflow.NewID(time.Now()), ExecutionID: cardflow.NewID(time.Now())}
	arn := "arn:aws:states:us-east-1:123456789012:execution:" + name + ":" + ref.ExecutionID
	describe := func(what string) *sfn.DescribeExecutionOutput {
		t.Helper()
		out, err := client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		if err != nil {
			t.Fatalf("%s: DescribeExecution: %v", what, err)
		}
		return out
	}

	if err := r.Start(ctx, ref); err != nil {
		t.Fatalf("Start: %v", err)
	}
	got := describe("after Start")
	wantInput, _ := json.Marshal(sfnrunner.ExecutionInput{Execution: ref})
	if got.Status != types.ExecutionStatusRunning || aws.ToString(got.Input) != string(wantInput) || aws.ToString(got.Name) != ref.ExecutionID {
		t.Errorf("after Start: got %s %s named %s, want RUNNING %s named %s", got.Status, aws.ToString(got.Input), aws.ToString(got.Name), wantInput, ref.ExecutionID)
	}
	// A repeated start is the same request again: no second execution.
	if err := r.Start(ctx, ref); err != nil {
		t.Errorf("Start again: %v", err)
	}
	list, err := client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(machine)})
	if err != nil || len(list.Executions) != 1 {
		t.Errorf("executions after two starts: got %d, %v; want 1", len(list.Executions), err)
	}

	// moto ends no task and checks no token: a made-up one is accepted.
	wait := &cardflow.Wait{StepID: "approve", Token: "a-token-no-task-issued",
		Resume: &cardflow.Resume{Payload: map[string]any{"decision": "approve"}, Actor: "ops"}}
	if err := r.Wake(ctx, ref, wait); err != nil {
		t.Errorf("Wake: %v", err)
	}

	if err := r.Stop(ctx, ref); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	got = describe("after Stop")
	if got.Status != types.ExecutionStatusAborted || got.StopDate == nil {
		t.Errorf("after Stop: got %s, stopped at %v; want ABORTED with a stop date", got.Status, got.StopDate)
	}
	// AWS reports the error and cause given to StopExecution; moto drops them.
	if aws.ToString(got.Error) != "" || aws.ToString(got.Cause) != "" {
		t.Errorf("after Stop: moto reports error %q and cause %q; it reported none when this test was written: check docs/DECISIONS.md",
			aws.ToString(got.Error), aws.ToString(got.Cause))
	}
	// Stopping again, starting the ended execution again and stopping one
	// that never started are no errors to the runner.
	if err := r.Stop(ctx, ref); err != nil {
		t.Errorf("Stop again: %v", err)
	}
	if err := r.Start(ctx, ref); err != nil {
		t.Errorf("Start of the stopped execution: %v", err)
	}
	if got := describe("after starting it again"); got.Status != types.ExecutionStatusAborted {
		t.Errorf("after starting a stopped execution again: got %s, want it left ABORTED", got.Status)
	}
	never := cardflow.ExecutionRef{OrganizationID: "acme", WorkflowID: ref.WorkflowID, ExecutionID: cardflow.NewID(time.Now())}
	if err := r.Stop(ctx, never); err != nil {
		t.Errorf("Stop of an execution that never started: %v", err)
	}

	// A redrive's run is a state machine execution of its own, <id>-r1,
	// which a repeated start does not start twice and Stop stops.
	rerun := ref
	rerun.Run = 1
	arn += "-r1"
	for range 2 {
		if err := r.Start(ctx, rerun); err != nil {
			t.Fatalf("Start the redrive's run: %v", err)
		}
	}
	got = describe("after the redrive's start")
	wantInput, _ = json.Marshal(sfnrunner.ExecutionInput{Execution: rerun})
	if got.Status != types.ExecutionStatusRunning || aws.ToString(got.Name) != ref.ExecutionID+"-r1" || aws.ToString(got.Input) != string(wantInput) {
		t.Errorf("the redrive's run: got %s named %s with %s, want RUNNING named %s-r1 with %s", got.Status, aws.ToString(got.Name), aws.ToString(got.Input), ref.ExecutionID, wantInput)
	}
	if list, err := client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(machine)}); err != nil || len(list.Executions) != 2 {
		t.Errorf("executions after the redrive: got %d, %v; want 2", len(list.Executions), err)
	}
	if err := r.Stop(ctx, rerun); err != nil {
		t.Fatalf("Stop the redrive's run: %v", err)
	}
	if got := describe("after stopping the redrive's run"); got.Status != types.ExecutionStatusAborted {
		t.Errorf("after stopping the redrive's run: got %s, want ABORTED", got.Status)
	}

	// StateMachineDoesNotExist, as AWS and the fake answer it.
	missing, err := sfnrunner.New(client, machine+"-missing", sfnrunner.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if err := missing.Start(ctx, ref); cardflow.ErrorCode(err) != cardflow.ENOTFOUND {
		t.Errorf("Start on a missing state machine: got %v, want NOT_FOUND", err)
	}
}
