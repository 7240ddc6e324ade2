//go:build linux

package samlocal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/cardflow/cardflow/cmd/cardflow-samevents/internal/samlocal"
	"github.com/cardflow/cardflow/internal/fakes/teamstest"
	"github.com/cardflow/cardflow/internal/mototest"
	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/ebscheduler"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/secrets"
)

// root is the repository's top directory.
var root = filepath.Join("..", "..", "..", "..")

// rieBinary returns AWS's Lambda Runtime Interface Emulator for this
// machine's architecture, as the SAM CLI that `make aws-tools` installs
// ships it ($AWS_LAMBDA_RIE names another). Without it the test is
// skipped (testenv).
func rieBinary(t *testing.T) string {
	t.Helper()
	const need = "AWS's Lambda Runtime Interface Emulator"
	testenv.Short(t, need)
	if p := os.Getenv("AWS_LAMBDA_RIE"); p != "" {
		return p
	}
	arch := map[string]string{"amd64": "x86_64", "arm64": "arm64"}[runtime.GOARCH]
	found, _ := filepath.Glob(filepath.Join(root, ".cache", "awstools", "lib", "python3*", "site-packages", "samcli", "local", "rapid", "aws-lambda-rie-"+arch))
	if len(found) == 0 {
		testenv.Skip(t, need, "no aws-lambda-rie-"+arch+" in SAM CLI's virtualenv: run `make aws-tools` (`make test` does)")
	}
	p, err := filepath.Abs(found[0])
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// buildFunctions builds every function's bootstrap as `make build` does,
// for this machine's architecture, into dir/<function>.
func buildFunctions(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", dir+string(filepath.Separator), "./functions/...")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./functions/...: %v\n%s", err, out)
	}
	return names
}

// freePort returns a loopback port nothing listens on just now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// syncBuffer collects the emulator's output, which it writes while the
// test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// invocation is one function's first invoke under the emulator.
type invocation struct {
	answer []byte
	log    string
	// init is the emulator's INIT REPORT duration (from the bootstrap's
	// exec to its first request for an event), reportInit the Init
	// Duration and invoke the Duration of its REPORT line.
	init, reportInit, invoke string
}

var (
	initReport   = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)
	invokeReport = regexp.MustCompile(`REPORT RequestId: \S+\s+Init Duration: ([0-9.]+) ms\s+Duration: ([0-9.]+) ms`)
)

// invoke starts exe under the emulator on loopback ports of its own with
// env as its whole environment, sends it event through the emulator's
// invoke endpoint and stops it once it has reported the invoke.
func invoke(t *testing.T, rie, exe string, env []string, event []byte) invocation {
	t.Helper()
	apiPort, port := freePort(t), freePort(t)
	cmd := exec.Command(rie, "--log-level", "info",
		"--runtime-api-address", "127.0.0.1:"+apiPort, "--runtime-interface-emulator-address", "127.0.0.1:"+port, exe)
	cmd.Dir, cmd.Env = filepath.Dir(exe), env
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// A group of its own, so that stopping it stops the bootstrap it ran too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	testenv.WaitFor(t, "the emulator to listen on port "+port, func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Post("http://127.0.0.1:"+port+"/2015-03-31/functions/function/invocations", "application/json", bytes.NewReader(event))
	if err != nil {
		t.Fatalf("invoke: %v\n%s", err, out.String())
	}
	answer, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("invoke: %d %s, %v\n%s", resp.StatusCode, answer, err, out.String())
	}
	// The REPORT line follows the answer.
	testenv.WaitFor(t, "the REPORT line", func() bool { return invokeReport.MatchString(out.String()) })
	inv := invocation{answer: answer, log: out.String()}
	if m := initReport.FindStringSubmatch(inv.log); m != nil {
		inv.init = m[1]
	}
	if m := invokeReport.FindStringSubmatch(inv.log); m != nil {
		inv.reportInit, inv.invoke = m[1], m[2]
	}
	return inv
}

// sameShape reports where got and want differ in anything but the values
// of strings and numbers: keys, nesting, types and lengths of arrays.
func sameShape(path string, got, want any) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: got %T, want an object", path, got)
		}
		gk, wk := slices.Sorted(maps.Keys(g)), slices.Sorted(maps.Keys(w))
		if !slices.Equal(gk, wk) {
			return fmt.Errorf("%s: keys %v, want %v", path, gk, wk)
		}
		for k := range w {
			if err := sameShape(path+"."+k, g[k], w[k]); err != nil {
				return err
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: got %v, want an array of %d", path, got, len(w))
		}
		for i := range w {
			if err := sameShape(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); err != nil {
				return err
			}
		}
	default:
		if reflect.TypeOf(got) != reflect.TypeOf(want) {
			return fmt.Errorf("%s: got %T, want %T", path, got, want)
		}
	}
	return nil
}

// TestRuntimeInterfaceEmulator runs every function of functions/, built as
// `make build` builds it, under AWS's Lambda Runtime Interface Emulator,
// with env.local.json's settings pointed at DynamoDB Local and at moto's
// Step Functions and EventBridge Scheduler. Each gets the event of
// events/<function>.json with the ids of the records this test seeded
// (the file must exist and have the shape of that event) and must answer
// as its handler does in process. It logs each function's init and
// first-invoke durations as the emulator reports them (`make bench-rie`).
func TestRuntimeInterfaceEmulator(t *testing.T) {
	rie := rieBinary(t)
	ddb := endpoint(t)
	moto := mototest.Endpoint(t)
	ctx := context.Background()
	_, prefix := newTables(t, ddb)

	// moto: a schedule group and the runner's state machine of the test's own.
	sched := scheduler.New(scheduler.Options{Region: mototest.Region, BaseEndpoint: aws.String(moto), Credentials: mototest.Credentials()})
	group := mototest.Name("cardflow-rie")
	if _, err := sched.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String(group)}); err != nil {
		t.Fatalf("CreateScheduleGroup at moto: %v", err)
	}
	sfnClient := sfn.New(sfn.Options{Region: mototest.Region, BaseEndpoint: aws.String(moto), Credentials: mototest.Credentials()})
	def, err := os.ReadFile(filepath.Join(root, "statemachine", "runner.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	machine, err := sfnClient.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String(mototest.Name("cardflow-rie-runner")), RoleArn: aws.String("arn:aws:iam::123456789012:role/cardflow-runner"),
		Definition: aws.String(strings.NewReplacer(
			"${AdvanceFunctionArn}", "arn:aws:lambda:us-east-1:123456789012:function:cardflow-dev-advance",
			"${ParkFunctionArn}", "arn:aws:lambda:us-east-1:123456789012:function:cardflow-dev-park").Replace(string(def))),
	})
	if err != nil {
		t.Fatalf("CreateStateMachine at moto: %v", err)
	}

	// Microsoft's side of Teams, trusted by the functions through
	// SSL_CERT_FILE, which Go reads on Linux.
	fake := teamstest.New(t)
	certFile := filepath.Join(t.TempDir(), "teams-fake.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: fake.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}

	// The functions' environment: env.local.json's, pointed at this test's
	// tables, group and state machine, and what Lambda itself sets.
	raw, err := os.ReadFile(filepath.Join(root, "env.local.json"))
	if err != nil {
		t.Fatal(err)
	}
	var local struct{ Parameters map[string]string }
	if err := json.Unmarshal(raw, &local); err != nil {
		t.Fatalf("env.local.json: %v", err)
	}
	vars := local.Parameters
	for k, v := range map[string]string{
		lambdamode.EnvDynamoDBEndpoint:                                 ddb,
		lambdamode.EnvTablePrefix:                                      prefix,
		lambdamode.EnvScheduleGroup:                                    group,
		lambdamode.EnvStateMachineARN:                                  aws.ToString(machine.StateMachineArn),
		lambdamode.EnvStepFunctionsEndpoint:                            moto,
		lambdamode.EnvSchedulerEndpoint:                                moto,
		lambdamode.EnvEventsEndpoint:                                   moto,
		"AWS_REGION":                                                   mototest.Region,
		"AWS_ACCESS_KEY_ID":                                            "AKIDEXAMPLE",
		"AWS_SECRET_ACCESS_KEY":                                        "secret",
		"AWS_SESSION_TOKEN":                                            "token",
		lambdamode.EnvTeamsSigningSecret:                               samlocal.SigningSecret,
		lambdamode.EnvTeamsAppID:                                       teamstest.AppID,
		lambdamode.EnvTeamsAppSecret:                                   "bot-secret",
		lambdamode.EnvTeamsTokenURL:                                    fake.TokenURL(),
		lambdamode.EnvTeamsOpenIDURL:                                   fake.MetadataURL(),
		lambdamode.EnvTeamsServiceHosts:                                fake.Host(),
		secrets.EnvName(secrets.DeploymentKey(samlocal.SigningSecret)): samlocal.SigningKey,
		secrets.EnvName(secrets.DeploymentKey("bot-secret")):           teamstest.AppSecret,
		"CARDFLOW_OUTBOUND_ALLOW":                                      fake.Host(),
		"SSL_CERT_FILE":                                                certFile,
	} {
		vars[k] = v
	}
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}

	store, err := (lambdamode.Env{TablePrefix: prefix, DynamoDBEndpoint: ddb, Region: mototest.Region}).OpenStore(slog.New(slog.DiscardHandler))
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
	// The committed bot event carries no Bot Framework token (only
	// Microsoft signs one a deployment accepts), so its shape is that of
	// an event rendered without one.
	unsigned := *f
	unsigned.BotToken, unsigned.BotServiceURL = "", ""
	shapes, err := samlocal.Events(&unsigned)
	if err != nil {
		t.Fatal(err)
	}

	bin := t.TempDir()
	names := buildFunctions(t, bin)

	// The expected answer of each function, in the order they run:
	// resume before cancel, which closes the process id; the Teams answers
	// before Advance, which then finds its execution cancelled.
	type check struct {
		name string
		// event names the function's sample event when it is not name.
		event string
		// status and contentType of an API Gateway proxy answer; 0 for
		// the functions that are not endpoints.
		status      int
		contentType string
		// body holds a substring of the answer.
		body string
	}
	checks := []check{
		{samlocal.Authorizer, "", 0, "", `"Effect":"Allow"`},
		{samlocal.ScheduleTarget, "", 0, "", `"started":true`},
		{"getWorkflowExecutionById", "", 200, "application/json", `\"workflow_execution_id\":\"` + f.ExecutionID + `\"`},
		{"getWorkflowExecutionHistory", "", 200, "application/json", `\"workflow_execution_id\":\"` + f.ExecutionID + `\"`},
		{"waitForExecution", "", 200, "application/json", `\"workflow_execution_id\":\"` + f.ExecutionID + `\"`},
		{"getOrganizationExecutions", "", 200, "application/json", `\"count\":5`},
		{"searchExecutions", "", 200, "application/json", `\"workflow_execution_id\":\"` + f.ExecutionID + `\"`},
		{"startBulkOperation", "", 200, "application/json", `\"status\":\"RUNNING\"`},
		{"getBulkOperation", "", 200, "application/json", `\"status\":\"SUCCEEDED\"`},
		{"getWorkflowById", "", 200, "application/json", `\"workflow_status_version\":\"ACTIVE_2\"`},
		{"getOrganizationWorkflows", "", 200, "application/json", `\"count\":5`},
		{"getWorkflowSchemaById", "", 200, "application/json", `\"workflow_mock_payload\"`},
		{"saveWorkflow", "", 200, "application/json", `\"workflow_name\":\"Leave request\"`},
		{"publishWorkflow", "", 200, "application/json", `\"latest\":\"true\"`},
		{"getCardById", "", 200, "application/json", `\"status_version\":\"ACTIVE-1\"`},
		{"getLatestActiveCard", "", 200, "application/json", `\"card_version\":2`},
		{"getOrganizationCards", "", 200, "application/json", `\"count\":5`},
		{"saveCard", "", 200, "application/json", `\"card_name\":\"Leave request\"`},
		{"publishCard", "", 200, "application/json", `\"status_version\":\"ACTIVE-2\"`},
		{"previewCard", "", 200, "application/json", `Purchase request for Ann Example`},
		{samlocal.Console, "", 200, "text/html; charset=utf-8", `<title>cardflow console</title>`},
		{"getPendingApprovals", "", 200, "application/json", `\"approval_id\":\"` + f.ApprovalID + `\"`},
		{"getApprovalById", "", 200, "application/json", `\"status\":\"PENDING\"`},
		{"answerApproval", "", 200, "application/json", `\"decision\":\"approve\",\"comment\":\"Within budget\",\"channel\":\"api\"`},
		{"reassignApproval", "", 409, "application/json", `you already answered approval`},
		{"setDelegation", "", 200, "application/json", `\"delegate\":\"erin@example.com\"`},
		{"getDelegations", "", 200, "application/json", `\"delegation_id\":\"` + samlocal.SampleDelegation + `\"`},
		{"removeDelegation", "", 200, "application/json", `\"delegation_id\":\"` + samlocal.SampleDelegation + `\"`},
		// An admin decides without the approver who has yet to answer.
		{"overrideApproval", "", 200, "application/json", `\"status\":\"OVERRIDDEN\"`},
		// The days of the sample event, from the aggregates by key.
		{"getApprovalStats", "", 200, "application/json", `\"by_day\":[{\"day\":\"2026-11-01\"`},
		{"triggerWorkflow", "", 200, "application/json", `\"service_execution_id\"`},
		{"getWorkflowSchedule", "", 200, "application/json", `\"status\":\"ACTIVE\"`},
		{"toggleScheduledWorkflow", "", 200, "application/json", `\"status\":\"PAUSED\"`},
		{"resumeWorkflow", "", 200, "application/json", `\"resumed\":true`},
		{"cancelExecution", "", 200, "application/json", `\"status\":\"CANCELLED\"`},
		{"redriveExecution", "", 200, "application/json", `\"status\":\"RUNNING\"`},
		// An admin registers the sample channel, sees it listed with
		// the kind only the registration gives it, and removes it; the
		// bot's conversation stays the organization's for the click below.
		{"registerConversation", "", 200, "application/json", `\"conversation_id\":\"` + samlocal.ChannelConversation + `\"`},
		{"listConversations", "", 200, "application/json", `\"kind\":\"channel\"`},
		{"removeConversation", "", 200, "application/json", `\"message\":\"success\"`},
		{lambdamode.TeamsRespond, "", 200, "text/html; charset=utf-8", "Nothing is recorded until you confirm."},
		{lambdamode.TeamsRespond, samlocal.TeamsRespondConfirm, 200, "text/html; charset=utf-8", "Thank you: your answer was recorded."},
		{lambdamode.TeamsMessages, "", 200, "application/json", `application/vnd.microsoft.card.adaptive`},
		{samlocal.Advance, "", 0, "", `"status":"CANCELLED"`},
		{samlocal.Park, "", 0, "", `null`},
		{samlocal.Housekeeping, "", 0, "", `{"waits_timed_out":0,"processes_closed":0,"early_resumes_dropped":0,"processes_deleted":0,"idempotency_deleted":0}`},
		{samlocal.PublishEvents, "", 0, "", `{"published":1,"pending":0}`},
		{samlocal.BulkOperations, "", 0, "", `null`},
	}
	var checked []string
	for i, c := range checks {
		if c.event == "" {
			checks[i].event = c.name
		}
		checked = append(checked, c.name)
	}
	slices.Sort(checked)
	checked = slices.Compact(checked)
	if !slices.Equal(names, checked) {
		t.Fatalf("functions/ holds %v; this test checks %v", names, checked)
	}

	for _, c := range checks {
		t.Run(c.event, func(t *testing.T) {
			committed, err := os.ReadFile(filepath.Join(root, "events", c.event+".json"))
			if err != nil {
				t.Fatalf("no sample event for the function: %v", err)
			}
			event, err := json.Marshal(evs[c.event])
			if err != nil {
				t.Fatal(err)
			}
			shape, err := json.Marshal(shapes[c.event])
			if err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(committed, &got); err != nil {
				t.Fatalf("events/%s.json: %v", c.event, err)
			}
			json.Unmarshal(shape, &want)
			if err := sameShape("events/"+c.event+".json", got, want); err != nil {
				t.Fatalf("%v (`go run ./cmd/cardflow-samevents` rewrites events/)", err)
			}

			inv := invoke(t, rie, filepath.Join(bin, c.name), env, event)
			answer := string(inv.answer)
			if strings.Contains(answer, `"errorType"`) || !strings.Contains(answer, c.body) {
				t.Fatalf("answer %s\nwant one with %s\n%s", answer, c.body, inv.log)
			}
			if c.status != 0 {
				var resp struct {
					StatusCode        int                 `json:"statusCode"`
					MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
				}
				if err := json.Unmarshal(inv.answer, &resp); err != nil {
					t.Fatalf("answer %s: %v", answer, err)
				}
				if resp.StatusCode != c.status || !slices.Equal(resp.MultiValueHeaders["Content-Type"], []string{c.contentType}) {
					t.Errorf("got %d with Content-Type %q, want %d with %s", resp.StatusCode, resp.MultiValueHeaders["Content-Type"], c.status, c.contentType)
				}
			}
			if inv.init == "" || inv.invoke == "" {
				t.Errorf("the emulator reported no init or no invoke:\n%s", inv.log)
			}
			t.Logf("rie: | %s | %s | %s | %s |", c.event, inv.init, inv.invoke, inv.reportInit)
		})
	}

	// What the functions asked of moto: the scheduled run, the trigger and
	// the redrive (as <id>-r1) started executions of the state machine, and
	// the toggle disabled the published workflow's schedule.
	list, err := sfnClient.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: machine.StateMachineArn})
	var redriven bool
	if err == nil {
		for _, e := range list.Executions {
			redriven = redriven || aws.ToString(e.Name) == f.TimedOutExecutionID+"-r1"
		}
	}
	if err != nil || len(list.Executions) != 3 || !redriven {
		t.Errorf("executions at moto: got %d, %v; want 3 (the schedule target's, the trigger's and the redrive's %s-r1)", len(list.Executions), err, f.TimedOutExecutionID)
	}
	sc, err := sched.GetSchedule(ctx, &scheduler.GetScheduleInput{
		Name: aws.String(ebscheduler.Name(samlocal.Organization, f.ScheduleWorkflowID)), GroupName: aws.String(group),
	})
	if err != nil || sc.State != types.ScheduleStateDisabled {
		t.Errorf("schedule at moto after the toggle: %+v, %v; want DISABLED", sc, err)
	}
}
