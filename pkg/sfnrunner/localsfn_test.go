package sfnrunner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/sfnrunner"
)

// npmCommand installs the Step Functions tools.
const npmCommand = "npm ci --prefix tools/stepfunctions"

// taskEnv tells the test binary, run by aws-local-stepfunctions in place
// of a Lambda function, which handler to run (see TestMain).
const taskEnv = "CARDFLOW_SFN_TASK"

// failEnv names a file whose presence makes Advance fail, as it would with
// the store out of reach; Advance that gives up still runs.
const failEnv = "CARDFLOW_SFN_FAIL"

func TestMain(m *testing.M) {
	if task := os.Getenv(taskEnv); task != "" {
		if err := runTask(task, os.Args[len(os.Args)-1], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(testenv.Run(m))
}

// runTask plays the Lambda service integration for aws-local-stepfunctions'
// --override-task: arg is the task's input ({"FunctionName", "Payload"}),
// and the result goes to out as lambda:invoke's answer. Park, which the
// tool cannot call back, returns once the wait is claimed.
func runTask(task, arg string, out *os.File) error {
	var in struct{ Payload json.RawMessage }
	if err := json.Unmarshal([]byte(arg), &in); err != nil {
		return fmt.Errorf("task input: %w", err)
	}
	ctx := context.Background()
	client, err := dynamoclient.New(ctx, os.Getenv("DYNAMODB_ENDPOINT"), "")
	if err != nil {
		return err
	}
	store, err := dynamostore.New(client, dynamostore.WithTablePrefix(os.Getenv("CARDFLOW_TABLE_PREFIX")))
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "cardflow-task-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	outbox, err := boltstore.Open(filepath.Join(dir, "outbox.db"))
	if err != nil {
		return err
	}
	defer outbox.Close()
	eng, err := localmode.NewEngine(store, outbox, localmode.Config{})
	if err != nil {
		return err
	}
	ender := &taskEnder{}
	h, err := sfnrunner.NewHandlers(eng, store, ender)
	if err != nil {
		return err
	}
	var result any
	switch task {
	case "advance":
		var a sfnrunner.AdvanceInput
		if err := json.Unmarshal(in.Payload, &a); err != nil {
			return err
		}
		if _, err := os.Stat(os.Getenv(failEnv)); err == nil && a.GiveUp == nil {
			return cardflow.Errorf(cardflow.EUNAVAILABLE, "the store cannot be reached")
		}
		if result, err = h.Advance(ctx, a); err != nil {
			return err
		}
	case "park":
		var p sfnrunner.ParkInput
		if err := json.Unmarshal(in.Payload, &p); err != nil {
			return err
		}
		if err := h.Park(ctx, p); err != nil {
			return err
		}
		if !ender.ended() {
			if err := awaitClaim(ctx, store, p); err != nil {
				return err
			}
		}
		result = map[string]any{"claimed": true}
	default:
		return fmt.Errorf("unknown task %q", task)
	}
	return json.NewEncoder(out).Encode(map[string]any{"ExecutedVersion": "$LATEST", "Payload": result, "StatusCode": 200})
}

// awaitClaim polls the process record until the wait Park registered is
// claimed or gone.
func awaitClaim(ctx context.Context, store cardflow.EngineStore, in sfnrunner.ParkInput) error {
	for {
		p, err := store.GetProcess(ctx, in.Execution.OrganizationID, in.ProcessID)
		if err != nil {
			return err
		}
		if p.Closed || p.Wait == nil || p.Wait.Seq != in.Wait || p.Wait.Claimed() {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// taskEnder stands in for Step Functions' callback API in a process that
// aws-local-stepfunctions runs for Park: ending the task is the process
// returning. It starts and stops nothing.
type taskEnder struct {
	mu  sync.Mutex
	end bool
}

var errNoExecutions = errors.New("aws-local-stepfunctions runs one execution per process")

func (e *taskEnder) ended() bool { e.mu.Lock(); defer e.mu.Unlock(); return e.end }

func (e *taskEnder) SendTaskSuccess(context.Context, *sfn.SendTaskSuccessInput, ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.end = true
	return &sfn.SendTaskSuccessOutput{}, nil
}

func (e *taskEnder) SendTaskFailure(context.Context, *sfn.SendTaskFailureInput, ...func(*sfn.Options)) (*sfn.SendTaskFailureOutput, error) {
	return nil, errNoExecutions
}

func (e *taskEnder) StartExecution(context.Context, *sfn.StartExecutionInput, ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	return nil, errNoExecutions
}

func (e *taskEnder) StopExecution(context.Context, *sfn.StopExecutionInput, ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error) {
	return nil, errNoExecutions
}

// localSFN is a cardflow.Runner that runs each execution through
// statemachine/runner.asl.json with aws-local-stepfunctions, one process
// per execution, its Task states bound to this test binary.
type localSFN struct {
	t          *testing.T
	node, root string
	scripts    string
	mu         sync.Mutex
	runs       map[string]chan error // execution id -> the process's end
}

func (r *localSFN) Start(_ context.Context, ref cardflow.ExecutionRef) error {
	dir := r.t.TempDir()
	ctxFile := filepath.Join(dir, "context.json")
	// One token per execution: its waits are one after another.
	if err := os.WriteFile(ctxFile, []byte(`{"Task": {"Token": "local-`+ref.ExecutionID+`"}}`), 0o600); err != nil {
		return err
	}
	input, _ := json.Marshal(sfnrunner.ExecutionInput{Execution: ref})
	cmd := exec.Command(r.node, "-r", filepath.Join(r.root, "tools", "stepfunctions", "node20.cjs"),
		filepath.Join(r.root, "tools", "stepfunctions", "node_modules", "aws-local-stepfunctions", "bin", "CLI.cjs"),
		"-f", filepath.Join(r.root, "statemachine", "runner.asl.json"),
		"-t", "Advance:"+filepath.Join(r.scripts, "advance"),
		"-t", "Park:"+filepath.Join(r.scripts, "park"),
		"-t", "GiveUp:"+filepath.Join(r.scripts, "advance"),
		// Retries, minutes apart on AWS, follow at once.
		"-r", "Advance:0", "-r", "GiveUp:0",
		"--context-file", ctxFile)
	cmd.Stdin = bytes.NewReader(append(input, '\n'))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	// A failed test leaves no execution running; its Park process ends when
	// DynamoDB Local stops.
	r.t.Cleanup(func() { cmd.Process.Kill() })
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if err != nil {
			err = fmt.Errorf("aws-local-stepfunctions: %v: %s", err, out.String())
		}
		done <- err
	}()
	r.mu.Lock()
	r.runs[ref.ExecutionID] = done
	r.mu.Unlock()
	return nil
}

// Wake does nothing: the Park process sees the claim in the store.
func (r *localSFN) Wake(context.Context, cardflow.ExecutionRef, *cardflow.Wait) error { return nil }

func (r *localSFN) Stop(context.Context, cardflow.ExecutionRef) error {
	return errors.New("cancel is not part of this test")
}

// result waits for the execution's process to end.
func (r *localSFN) result(id string) error {
	r.mu.Lock()
	done := r.runs[id]
	r.mu.Unlock()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		return errors.New("aws-local-stepfunctions did not finish in a minute")
	}
}

// TestDefinitionOnLocalStepFunctions validates statemachine/runner.asl.json
// with asl-validator and runs four workflows through it with
// aws-local-stepfunctions, whose Task states run the real Advance and Park
// handlers in processes of their own over the same DynamoDB tables, and a
// fifth whose Advance fails for good, which GiveUp records, and which is
// then redriven.
func TestDefinitionOnLocalStepFunctions(t *testing.T) {
	testenv.Short(t, localSFNTools)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not installed")
	}
	tools := filepath.Join(root, "tools", "stepfunctions", "node_modules")
	for _, pkg := range []string{"asl-validator", "aws-local-stepfunctions"} {
		if _, err := os.Stat(filepath.Join(tools, pkg)); err != nil {
			unavailable(t, "tools/stepfunctions/node_modules/"+pkg+" is missing")
		}
	}
	def := filepath.Join(root, "statemachine", "runner.asl.json")
	if out, err := exec.Command(node, filepath.Join(tools, "asl-validator", "dist", "bin", "asl-validator.js"), "--json-path", def).CombinedOutput(); err != nil {
		t.Fatalf("asl-validator: %v: %s", err, out)
	}

	open, prefix := dynamostoretest.Tables(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	scripts := t.TempDir()
	failFile := filepath.Join(scripts, "fail")
	for _, task := range []string{"advance", "park"} {
		script := fmt.Sprintf("#!/bin/sh\nCARDFLOW_TABLE_PREFIX=%q %s=%s %s=%q exec %q \"$1\"\n", prefix, taskEnv, task, failEnv, failFile, self)
		if err := os.WriteFile(filepath.Join(scripts, task), []byte(script), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	store := open(t)
	outbox := boltStore(t, "outbox.db")
	t.Cleanup(func() { outbox.Close() })
	eng, err := localmode.NewEngine(store, outbox, localmode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	runner := &localSFN{t: t, node: node, root: root, scripts: scripts, runs: map[string]chan error{}}
	svc, err := app.New(store, app.Deps{Checker: eng, CardChecker: cards.Checker{}, Runner: runner})
	if err != nil {
		t.Fatal(err)
	}
	ctx := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
		OrganizationID: "org-local-sfn", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "test",
	})
	card, err := svc.SaveCard(ctx, app.SaveCardInput{CardName: "approve", CardPayload: map[string]any{"type": "AdaptiveCard", "version": "1.5", "body": []any{}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PublishCard(ctx, card.CardID, card.CardVersion); err != nil {
		t.Fatal(err)
	}
	type obj = map[string]any
	step := func(id, typ string, cfg obj) cardflow.Step {
		return cardflow.Step{ID: id, Name: id, Type: typ, Config: cfg}
	}
	for _, tt := range []struct {
		name  string
		steps []cardflow.Step
		conns []cardflow.Connection
		// resume, if set, answers the card's wait; approver, if set,
		// answers the approval through the approvals API as that person.
		resume, approver string
		want             string
	}{
		{"SynchronousChain", []cardflow.Step{
			step("start", "trigger", obj{"kind": "REQUEST"}),
			step("double", "transform", obj{"output": "{{ input.n * 2.0 }}"}),
			step("big", "condition", obj{}),
			step("yes", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.double.output }}"}),
			step("no", "end", obj{"status": "FAILED"}),
		}, []cardflow.Connection{{From: "start", To: "double"}, {From: "double", To: "big"},
			{From: "big", To: "yes", When: "steps.double.output > 10.0"}, {From: "big", To: "no"}}, "", "", "42"},
		{"CardWaitResumed", []cardflow.Step{
			step("start", "trigger", obj{"kind": "REQUEST"}),
			step("ask", "card", obj{"card_id": card.CardID, "timeout": "PT1H"}),
			step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.ask.output.decision }}"}),
		}, []cardflow.Connection{{From: "start", To: "ask"}, {From: "ask", To: "done"}}, `{"source": "TEAMS", "decision": "approve"}`, "", `"approve"`},
		{"ApprovalAnswered", []cardflow.Step{
			step("start", "trigger", obj{"kind": "REQUEST"}),
			step("ask", cardflow.StepApproval, obj{"card_id": card.CardID, "approvers": []any{"ann@example.com"}, "policy": "first", "timeout": "PT1H"}),
			step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.ask.output.outcome }}"}),
			step("no", "end", obj{"status": "FAILED"}),
		}, []cardflow.Connection{{From: "start", To: "ask"}, {From: "ask", To: "done"}, {From: "ask", To: "no", On: cardflow.ExitRejected}}, "", "ann@example.com", `"approved"`},
		{"Delay", []cardflow.Step{
			step("start", "trigger", obj{"kind": "REQUEST"}),
			step("pause", "delay", obj{"duration": "PT1S"}),
			step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.pause.output.until != '' }}"}),
		}, []cardflow.Connection{{From: "start", To: "pause"}, {From: "pause", To: "done"}}, "", "", "true"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wf, err := svc.SaveWorkflow(ctx, app.SaveWorkflowInput{WorkflowName: tt.name, WorkflowSteps: tt.steps, WorkflowConnections: tt.conns})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.PublishWorkflow(ctx, wf.WorkflowID, wf.WorkflowVersion); err != nil {
				t.Fatal(err)
			}
			out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: wf.WorkflowID, Body: []byte(`{"n": 21}`)})
			if err != nil {
				t.Fatal(err)
			}
			if tt.resume != "" {
				awaitToken(t, store, "org-local-sfn", out.ExecutionID)
				if _, err := svc.Resume(ctx, out.ExecutionID, []byte(tt.resume)); err != nil {
					t.Fatalf("resume: %v", err)
				}
			}
			if tt.approver != "" {
				awaitToken(t, store, "org-local-sfn", out.ExecutionID)
				as := cardflow.NewContextWithPrincipal(context.Background(), &cardflow.Principal{
					OrganizationID: "org-local-sfn", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: tt.approver, Person: tt.approver,
				})
				in := app.AnswerApprovalInput{ApprovalID: cardflow.ApprovalIDOf(out.ExecutionID, 1), Decision: "approve"}
				if _, err := svc.AnswerApproval(as, in); err != nil {
					t.Fatalf("answer: %v", err)
				}
			}
			if err := runner.result(out.ExecutionID); err != nil {
				t.Fatal(err)
			}
			ex, err := svc.GetExecution(ctx, wf.WorkflowID, out.ExecutionID)
			if err != nil {
				t.Fatal(err)
			}
			// Each ends with a value, kept under "value".
			b, _ := json.Marshal(ex.WorkflowOutputPayload[cardflow.PayloadValueKey])
			if got, want := ex.Status+" "+string(b), "SUCCEEDED "+tt.want; got != want {
				t.Errorf("got %s, want %s", got, want)
			}
		})
	}

	// Advance fails for good while the execution sleeps: GiveUp records it
	// FAILED in the step it was in, and a redrive runs it on from there.
	t.Run("GiveUpAndRedrive", func(t *testing.T) {
		wf, err := svc.SaveWorkflow(ctx, app.SaveWorkflowInput{WorkflowName: "give up", WorkflowSteps: []cardflow.Step{
			step("start", "trigger", obj{"kind": "REQUEST"}),
			step("double", "transform", obj{"output": "{{ input.n * 2.0 }}"}),
			step("pause", "delay", obj{"duration": "PT1S"}),
			step("done", "end", obj{"status": "SUCCEEDED", "output": "{{ steps.double.output }}"}),
		}, WorkflowConnections: []cardflow.Connection{{From: "start", To: "double"}, {From: "double", To: "pause"}, {From: "pause", To: "done"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.PublishWorkflow(ctx, wf.WorkflowID, wf.WorkflowVersion); err != nil {
			t.Fatal(err)
		}
		out, err := svc.Trigger(ctx, app.TriggerInput{WorkflowID: wf.WorkflowID, Body: []byte(`{"n": 21}`)})
		if err != nil {
			t.Fatal(err)
		}
		testenv.WaitFor(t, "the execution asleep", func() bool {
			ex, err := svc.GetExecution(ctx, wf.WorkflowID, out.ExecutionID)
			if err != nil {
				t.Fatal(err)
			}
			return ex.Status == cardflow.ExecWaiting
		})
		if err := os.WriteFile(failFile, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := runner.result(out.ExecutionID); err == nil || !strings.Contains(err.Error(), "The workflow ended FAILED") {
			t.Errorf("state machine: got %v, want it failed in the Failed state", err)
		}
		ex, err := svc.GetExecution(ctx, wf.WorkflowID, out.ExecutionID)
		if err != nil {
			t.Fatal(err)
		}
		if reason, _ := ex.WorkflowOutputPayload["error"].(string); ex.Status != cardflow.ExecFailed || ex.WorkflowCurrentState != "pause" || !strings.Contains(reason, "gave up") {
			t.Errorf("got %s in %q saying %q, want FAILED in pause saying the runner gave up", ex.Status, ex.WorkflowCurrentState, reason)
		}
		if err := os.Remove(failFile); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.RedriveExecution(ctx, app.RedriveInput{WorkflowID: wf.WorkflowID, WorkflowExecutionID: out.ExecutionID}); err != nil {
			t.Fatalf("redrive: %v", err)
		}
		if err := runner.result(out.ExecutionID); err != nil {
			t.Fatal(err)
		}
		ex, err = svc.GetExecution(ctx, wf.WorkflowID, out.ExecutionID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(ex.WorkflowOutputPayload[cardflow.PayloadValueKey])
		if got, want := ex.Status+" "+string(b), "SUCCEEDED 42"; got != want {
			t.Errorf("after the redrive: got %s, want %s", got, want)
		}
	})
}

// awaitToken polls until Park has registered its token on the wait.
func awaitToken(t *testing.T, store cardflow.EngineStore, org, processID string) {
	t.Helper()
	testenv.WaitFor(t, "Park to register its token", func() bool {
		p, err := store.GetProcess(context.Background(), org, processID)
		if err != nil {
			t.Fatal(err)
		}
		return p.Wait != nil && strings.HasPrefix(p.Wait.Token, "local-")
	})
}

// localSFNTools is what TestDefinitionOnLocalStepFunctions needs.
const localSFNTools = "Node.js with asl-validator and aws-local-stepfunctions"

func unavailable(t *testing.T, why string) {
	t.Helper()
	testenv.Skip(t, localSFNTools, fmt.Sprintf("%s; run %q in the repository root", why, npmCommand))
}
