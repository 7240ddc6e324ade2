package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/sample"
)

// TestMain lets the test binary stand in for cardflow-load as the floor
// run's answering process, which runs the command's own executable.
func TestMain(m *testing.M) {
	if file := os.Getenv(floorAnswerEnv); file != "" {
		if err := serveFloor(file); err != nil {
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// localServer is a real local stack with the sample data behind a loopback
// HTTP server, and a data directory holding its demo.env.
func localServer(t *testing.T) (url, dataDir string) {
	t.Helper()
	dataDir = t.TempDir()
	store, err := boltstore.Open(filepath.Join(dataDir, localmode.StoreFile))
	if err != nil {
		t.Fatal(err)
	}
	st, err := localmode.NewStack(store, store, localmode.Config{EarlyResume: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	admin := &cardflow.Principal{OrganizationID: "load-org", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Actor: "test"}
	ids, err := sample.Load(cardflow.NewContextWithPrincipal(context.Background(), admin), st.Service)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := st.Service.CreateKey(context.Background(), app.CreateKeyInput{OrganizationID: "load-org", WorkspaceID: "ws", Scopes: cardflow.AllScopes, Name: "load"})
	if err != nil {
		t.Fatal(err)
	}
	env := "KEY=" + key + "\nWORKFLOW_ID=" + ids.ApprovalWorkflowID + "\nEXECUTION_ID=" + ids.ExecutionID + "\n"
	if err := os.WriteFile(filepath.Join(dataDir, localmode.DemoEnvFile), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(st.Service, httpapi.KeyAuthenticator{Service: st.Service})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv.URL, dataDir
}

// TestLoadRun runs every load run, briefly, against a real local server and
// checks the report: no errors, every execution final as expected,
// profiles and peak memory taken.
func TestLoadRun(t *testing.T) {
	url, dataDir := localServer(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	prof := httptest.NewServer(mux)
	defer prof.Close()
	profiles := t.TempDir()
	md := filepath.Join(t.TempDir(), "load.md")
	args := []string{"--url", url, "--data-dir", dataDir, "--conns", "4", "--duration", "300ms", "--executions", "10",
		"--timeout", "PT1S", "--wait", "1m", "--clients", "1,3", "--roundtrip-duration", "300ms", "--pid", strconv.Itoa(os.Getpid()), "--pprof", prof.URL, "--profile-dir", profiles, "--markdown", md}
	var out strings.Builder
	if err := run(t.Context(), args, &out, io.Discard); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	for _, want := range []string{
		"| triggerworkflow |", "| getWorkflowExecutionById |", "| getOrganizationExecutions |", "| floor: the same answer, no work |",
		"| resumed | 5 SUCCEEDED | 0 | 0 |", "| timed out | 5 FAILED | 0 | 0 |", " MiB",
		"0 still open, 0 lost", "5 resumed through the API, 5 left to time out",
		"Approval round trips over HTTP", "\n| 1 | ", "\n| 3 | ",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	for _, f := range []string{"triggers.cpu.pprof", "getWorkflowExecutionById.cpu.pprof", "getOrganizationExecutions.cpu.pprof", "approvals.cpu.pprof", "roundtrips-1.cpu.pprof", "roundtrips-3.cpu.pprof", "roundtrips-1.block.pprof", "roundtrips-1.mutex.pprof", "allocs.pprof"} {
		if fi, err := os.Stat(filepath.Join(profiles, f)); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s: got %v, want a file", f, err)
		}
	}
}

func TestFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--run", "reads,writes"}, `unknown run "writes"`},
		{[]string{"--timeout", "P1M"}, "--timeout"},
		{[]string{"--conns", "0"}, "must be positive"},
		{[]string{"--clients", "1,x"}, "--clients"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		_, err := parseFlags(tc.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parseFlags(%q): got %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

func TestMissingDemoEnv(t *testing.T) {
	err := run(t.Context(), []string{"--data-dir", t.TempDir()}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cardflow serve --data-dir") {
		t.Errorf("got %v, want an error saying to start the service", err)
	}
}
