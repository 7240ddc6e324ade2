package lambdamode_test

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkColdStart measures each function's start: from exec of its
// bootstrap, built as `make build` builds it (for this machine's
// architecture), to its first request to the Lambda Runtime API, which a
// server on loopback answers. Nothing before that request may touch the
// network, so this is the whole of a function's own init.
//
//	go test -run '^$' -bench ColdStart ./pkg/lambdamode/
func BenchmarkColdStart(b *testing.B) {
	root := filepath.Join("..", "..")
	dirs, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		b.Fatal(err)
	}
	bin := b.TempDir()
	for _, d := range dirs {
		name := d.Name()
		exe := filepath.Join(bin, name)
		build := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", exe, "./functions/"+name)
		build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			b.Fatalf("build %s: %v\n%s", name, err, out)
		}
		b.Run(name, func(b *testing.B) {
			st, err := os.Stat(exe)
			if err != nil {
				b.Fatal(err)
			}
			var starts []time.Duration
			for b.Loop() {
				starts = append(starts, coldStart(b, exe))
			}
			// The median: a machine shared with other work adds outliers.
			slices.Sort(starts)
			b.ReportMetric(float64(starts[len(starts)/2].Microseconds())/1000, "ms/start")
			b.ReportMetric(float64(st.Size())/(1<<20), "MB")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// coldStart runs exe once against a Runtime API on loopback and returns the
// time from exec to its first request for an invocation.
func coldStart(b *testing.B, exe string) time.Duration {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	first := make(chan time.Time, 1)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/2018-06-01/runtime/invocation/next" {
			select {
			case first <- time.Now():
			default:
			}
			<-r.Context().Done() // no invocation comes
			return
		}
		http.Error(w, "not expected", http.StatusNotFound)
	})}
	go srv.Serve(ln)
	defer srv.Close()

	cmd := exec.Command(exe)
	cmd.Env = []string{
		"AWS_LAMBDA_RUNTIME_API=" + ln.Addr().String(),
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=secret", "AWS_SESSION_TOKEN=token",
		"CARDFLOW_TABLE_PREFIX=cardflow-bench-",
		"CARDFLOW_SCHEDULE_GROUP=cardflow-bench",
		"CARDFLOW_SCHEDULE_TARGET_ARN=arn:aws:lambda:us-east-1:123456789012:function:cardflow-bench-target",
		"CARDFLOW_SCHEDULER_ROLE_ARN=arn:aws:iam::123456789012:role/cardflow-bench-scheduler",
		"CARDFLOW_SCHEDULER_DEAD_LETTER_ARN=arn:aws:sqs:us-east-1:123456789012:cardflow-bench-dlq",
		"CARDFLOW_STATE_MACHINE_ARN=arn:aws:states:us-east-1:123456789012:stateMachine:cardflow-bench-runner",
		// A bot and response links, so that both Teams functions exist.
		"CARDFLOW_PUBLIC_URL=https://cardflow.example.com",
		"CARDFLOW_TEAMS_SIGNING_SECRET=teams-signing",
		"CARDFLOW_TEAMS_APP_ID=00000000-0000-0000-0000-000000000000",
		"CARDFLOW_TEAMS_APP_SECRET=bot-secret",
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	select {
	case at := <-first:
		return at.Sub(start)
	case <-time.After(10 * time.Second):
		b.Fatalf("%s made no request to the Runtime API within 10 s", filepath.Base(exe))
	}
	return 0
}
