// Command cardflow-load puts a running cardflow service under load from a
// second process and reports what it measured.
//
//	cardflow-load [--url http://localhost:3000] [--data-dir .cardflow] [--conns 64] [--duration 30s]
//	              [--executions 10000] [--timeout PT20S] [--clients 1,32,128] [--roundtrip-duration 10s]
//	              [--pid PID] [--pprof URL [--profile-client]] [--markdown FILE]
//
// It reads the demo key and the sample ids from the data directory's
// demo.env, then runs, in order: triggerworkflow for --duration (and checks
// that every execution it started finished), getWorkflowExecutionById and
// getOrganizationExecutions for --duration each, the floor under those
// reads (the same answer from a process that does no work) for --duration,
// and --executions runs of
// the approval workflow, half resumed, half timing out; then approval round
// trips (trigger with a process id, resume, waitForExecution until final)
// from --clients clients at once, for --roundtrip-duration each.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/loadgen"
)

func main() {
	if file := os.Getenv(floorAnswerEnv); file != "" {
		if err := serveFloor(file); err != nil {
			fmt.Fprintln(os.Stderr, "cardflow-load:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cardflow-load:", err)
		os.Exit(1)
	}
}

// config is what the flags set.
type config struct {
	url, dataDir, key  string
	conns              int
	duration, wait     time.Duration
	executions         int
	timeout            string
	pid                int
	pprofURL, profiles string
	markdown           string
	scenarios          map[string]bool
	clients            []int
	roundTrip          time.Duration
	profileClient      bool
	// stderr receives warnings that do not stop the run.
	stderr io.Writer
}

var allScenarios = []string{"triggers", "reads", "floor", "approvals", "roundtrips"}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("cardflow-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := os.Getenv("PORT")
	if port == "" {
		port = "3000"
	}
	dataDir := os.Getenv("CARDFLOW_DATA_DIR")
	if dataDir == "" {
		dataDir = ".cardflow"
	}
	c := &config{stderr: stderr}
	fs.StringVar(&c.url, "url", "http://localhost:"+port, "base URL of the service")
	fs.StringVar(&c.dataDir, "data-dir", dataDir, "the service's data directory, for demo.env (key and sample ids)")
	fs.StringVar(&c.key, "key", os.Getenv("CARDFLOW_API_KEY"), "API key with the read, execute and admin scopes (default: the demo key)")
	fs.IntVar(&c.conns, "conns", 64, "concurrent connections")
	fs.DurationVar(&c.duration, "duration", 30*time.Second, "how long each trigger and read run lasts")
	fs.IntVar(&c.executions, "executions", 10000, "approval executions, half resumed, half timing out")
	fs.StringVar(&c.timeout, "timeout", "PT20S", "card timeout (ISO 8601) of the approval version the run publishes")
	fs.DurationVar(&c.wait, "wait", 5*time.Minute, "how long to wait for executions to finish after a run")
	fs.IntVar(&c.pid, "pid", 0, "process id of the server, to report its peak memory (VmHWM)")
	fs.StringVar(&c.pprofURL, "pprof", "", "base URL of the server's profiles (cardflow serve --pprof), e.g. http://127.0.0.1:6060")
	fs.StringVar(&c.profiles, "profile-dir", "bench", "where the profiles go")
	fs.BoolVar(&c.profileClient, "profile-client", false, "with --pprof, also profile the load generator itself (NAME.client.cpu.pprof), which must then run apart from the server")
	fs.StringVar(&c.markdown, "markdown", "", "also write the figures as Markdown to this file")
	clients := fs.String("clients", "1,32,128", "round trips: how many clients at once, one run each")
	fs.DurationVar(&c.roundTrip, "roundtrip-duration", 10*time.Second, "how long each round-trip run lasts")
	only := fs.String("run", strings.Join(allScenarios, ","), "which runs: "+strings.Join(allScenarios, ","))
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c.scenarios = map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		if !strings.Contains(","+strings.Join(allScenarios, ",")+",", ","+s+",") {
			return nil, fmt.Errorf("--run: unknown run %q; the runs are %s", s, strings.Join(allScenarios, ", "))
		}
		c.scenarios[s] = true
	}
	for _, f := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--clients: want positive whole numbers separated by commas, got %q", *clients)
		}
		c.clients = append(c.clients, n)
	}
	if c.conns < 1 || c.executions < 0 || c.duration <= 0 || c.roundTrip <= 0 {
		return nil, errors.New("--conns, --duration and --roundtrip-duration must be positive, --executions not negative")
	}
	if _, err := cardflow.ParseDuration(c.timeout); err != nil {
		return nil, fmt.Errorf("--timeout: %w", err)
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	env, err := readEnvFile(filepath.Join(cfg.dataDir, "demo.env"))
	if err != nil {
		return fmt.Errorf("%w (start the service with `cardflow serve --data-dir %s` first)", err, cfg.dataDir)
	}
	if cfg.key == "" {
		cfg.key = env["KEY"]
	}
	for _, name := range []string{"WORKFLOW_ID", "EXECUTION_ID"} {
		if env[name] == "" {
			return fmt.Errorf("%s has no %s", filepath.Join(cfg.dataDir, "demo.env"), name)
		}
	}
	c, err := loadgen.NewClient(cfg.url, cfg.key, cfg.conns)
	if err != nil {
		return err
	}
	defer c.Close()
	if cfg.pprofURL != "" {
		if err := os.MkdirAll(cfg.profiles, 0o755); err != nil {
			return err
		}
	}
	rep := &report{conns: cfg.conns, duration: cfg.duration}
	wf, exec := env["WORKFLOW_ID"], env["EXECUTION_ID"]

	if cfg.scenarios["triggers"] {
		// Below every version's threshold: the approval ends at once.
		small := map[string]any{"requester": "load@example.com", "item": "Pens", "amount": 10}
		var ids []string
		cfg.profile(ctx, "triggers", cfg.duration, func() {
			var r loadgen.Result
			r, ids = loadgen.Triggers(ctx, c, cfg.conns, cfg.duration, wf, small)
			rep.add(stdout, r, cfg.rss())
		})
		o := loadgen.AwaitFinished(ctx, c, cfg.conns, wf, ids, time.Now().Add(cfg.wait))
		rep.triggered, rep.triggeredOutcome = len(ids), o
		fmt.Fprintf(stdout, "triggered executions: %d started, %s\n", len(ids), outcome(o))
	}
	if cfg.scenarios["reads"] {
		reads := []struct{ name, path string }{
			{"getWorkflowExecutionById", loadgen.ExecutionPath(wf, exec)},
			{"getOrganizationExecutions", "/v1/workflows/getOrganizationExecutions"},
		}
		for _, rd := range reads {
			cfg.profile(ctx, rd.name, cfg.duration, func() {
				r := loadgen.Run(ctx, rd.name, cfg.conns, cfg.duration, c.Get(rd.path))
				rep.add(stdout, r, cfg.rss())
			})
		}
		var page struct {
			Count int `json:"count"`
		}
		if err := c.Call(ctx, "GET", reads[1].path, nil, &page); err == nil {
			rep.listItems = page.Count
		}
	}
	if cfg.scenarios["floor"] {
		r, err := runFloor(ctx, c, cfg, loadgen.ExecutionPath(wf, exec))
		if err != nil {
			return err
		}
		rep.add(stdout, r, 0)
	}
	if cfg.scenarios["approvals"] && cfg.executions > 0 {
		d, _ := cardflow.ParseDuration(cfg.timeout)
		a := loadgen.Approval{
			WorkflowID: wf,
			Input:      map[string]any{"requester": "load@example.com", "item": "Workstation", "amount": 4800},
			Timeout:    cfg.timeout,
		}
		var res loadgen.EngineResult
		var err error
		cfg.profile(ctx, "approvals", d, func() {
			res, err = loadgen.RunApprovals(ctx, c, cfg.conns, cfg.executions, a, time.Now().Add(cfg.wait))
		})
		if err != nil {
			return err
		}
		rep.approvals, rep.approvalsRSS, rep.timeout = &res, cfg.rss(), cfg.timeout
		fmt.Fprintf(stdout, "approvals: %d executions of version %d in %s (timeout %s); resumed half: %s; timed-out half: %s; server peak RSS %s\n",
			res.Executions, res.Version, res.Elapsed.Round(time.Millisecond), cfg.timeout, outcome(res.ResumedOutcome), outcome(res.TimedOutOutcome), mib(rep.approvalsRSS))
		fmt.Fprintln(stdout, "  ", res.Triggers)
		fmt.Fprintln(stdout, "  ", res.Resumes)
	}
	if cfg.scenarios["roundtrips"] {
		// Above every version's threshold: each waits for its card.
		large := map[string]any{"requester": "load@example.com", "item": "Workstation", "amount": 4800}
		for _, n := range cfg.clients {
			rc, err := loadgen.NewClient(cfg.url, cfg.key, n)
			if err != nil {
				return err
			}
			var res loadgen.RoundTripResult
			cfg.profile(ctx, "roundtrips-"+strconv.Itoa(n), cfg.roundTrip, func() {
				res = loadgen.RoundTrips(ctx, rc, n, cfg.roundTrip, wf, large, time.Now().Add(cfg.roundTrip+cfg.wait))
			})
			rc.Close()
			rep.roundTrips = append(rep.roundTrips, res)
			fmt.Fprintf(stdout, "round trips, %d clients: %s; resume to end p50 %.2fms, p99 %.2fms; %d executions: %s\n",
				n, res.Approvals, msf(res.ResumeToEnd.P50), msf(res.ResumeToEnd.P99), res.Started, outcome(res.Outcome))
		}
	}
	if cfg.pprofURL != "" {
		if err := cfg.fetch(ctx, "/debug/pprof/allocs", "allocs.pprof"); err != nil {
			return err
		}
	}
	if cfg.markdown != "" {
		if err := os.WriteFile(cfg.markdown, []byte(rep.markdown()), 0o644); err != nil {
			return err
		}
	}
	if n := rep.problems(); n > 0 {
		return fmt.Errorf("%d requests failed or executions did not finish as expected", n)
	}
	return nil
}

// profile runs f while the server records a CPU profile of about d, when
// profiles were asked for, and the block and mutex profiles of the same
// time (empty unless the server runs with --pprof-contention).
func (cfg *config) profile(ctx context.Context, name string, d time.Duration, f func()) {
	if cfg.pprofURL == "" {
		f()
		return
	}
	secs := strconv.Itoa(max(1, int(d.Round(time.Second)/time.Second)))
	kinds := []struct{ path, file string }{
		{"/debug/pprof/profile?seconds=" + secs, name + ".cpu.pprof"},
		{"/debug/pprof/block?seconds=" + secs, name + ".block.pprof"},
		{"/debug/pprof/mutex?seconds=" + secs, name + ".mutex.pprof"},
	}
	done := make(chan error, len(kinds))
	for _, k := range kinds {
		go func() {
			if err := cfg.fetch(ctx, k.path, k.file); err != nil {
				done <- fmt.Errorf("%s: %w", k.file, err)
				return
			}
			done <- nil
		}()
	}
	// The load generator shares the machine with the server: its own CPU
	// profile of the run, and the CPU it used, tell what it takes away.
	stopClient := cfg.clientProfile(name)
	f()
	stopClient()
	for range kinds {
		if err := <-done; err != nil {
			fmt.Fprintln(cfg.stderr, "cardflow-load: profile of", name+":", err)
		}
	}
}

// clientProfile starts a CPU profile of this process, with
// --profile-client; the func it returns stops it and reports the CPU time
// used meanwhile.
func (cfg *config) clientProfile(name string) func() {
	before := cpuTime()
	var f *os.File
	if cfg.profileClient {
		var err error
		if f, err = os.Create(filepath.Join(cfg.profiles, name+".client.cpu.pprof")); err == nil {
			if err = pprof.StartCPUProfile(f); err != nil {
				f.Close()
				f = nil
			}
		}
		if err != nil {
			fmt.Fprintln(cfg.stderr, "cardflow-load: profile of the load generator:", err)
		}
	}
	return func() {
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
		}
		fmt.Fprintf(cfg.stderr, "%s: the load generator used %.2fs of CPU\n", name, (cpuTime() - before).Seconds())
	}
}

// cpuTime is the CPU time this process used so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fetch saves a profile of the server.
func (cfg *config) fetch(ctx context.Context, path, file string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimRight(cfg.pprofURL, "/")+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s: status %d", path, resp.StatusCode)
	}
	f, err := os.Create(filepath.Join(cfg.profiles, file))
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// rss is the server's peak resident memory so far in bytes (VmHWM), or 0
// without --pid.
func (cfg *config) rss() int64 {
	if cfg.pid == 0 {
		return 0
	}
	n, err := peakRSS(cfg.pid)
	if err != nil {
		fmt.Fprintln(cfg.stderr, "cardflow-load:", err)
	}
	return n
}

// peakRSS reads VmHWM from /proc/<pid>/status.
func peakRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("peak memory of process %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("peak memory of process %d: no VmHWM in /proc/%d/status", pid, pid)
}

// readEnvFile reads NAME=value lines.
func readEnvFile(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			env[k] = v
		}
	}
	return env, nil
}
