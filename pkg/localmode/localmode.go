// Package localmode runs the whole service in one process: the HTTP API, key
// management on a unix socket, and the demo data on first start. Records go
// to the embedded store, or to DynamoDB with CARDFLOW_STORE=dynamodb.
package localmode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/trace"
	"golang.org/x/net/netutil"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/console"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/keyadmin"
	"github.com/cardflow/cardflow/pkg/localrunner"
	"github.com/cardflow/cardflow/pkg/localscheduler"
	"github.com/cardflow/cardflow/pkg/outbound"
	"github.com/cardflow/cardflow/pkg/promstats"
	"github.com/cardflow/cardflow/pkg/sample"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/secrets/smclient"
	"github.com/cardflow/cardflow/pkg/teams"
	"github.com/cardflow/cardflow/pkg/tokenbucket"
	"github.com/cardflow/cardflow/schemas"
)

// The demo tenant created on first start.
const (
	DemoOrganization = "demo-org"
	DemoWorkspace    = "demo-workspace"
)

// Files in the data directory.
const (
	StoreFile   = "cardflow.db"
	SocketFile  = "admin.sock"
	DemoKeyFile = "demo-key"
	DemoEnvFile = "demo.env"
	// OutboxFile holds the local outbox when the records are in DynamoDB.
	OutboxFile = "outbox.db"
)

// Config configures a local server.
type Config struct {
	// Addr is the HTTP listen address, e.g. ":3000".
	Addr string
	// DataDir holds the store file, the admin socket and the demo key.
	DataDir string
	// Out receives the start-up banner (the demo key, once).
	Out io.Writer
	Log *slog.Logger
	// EarlyResume is how long a resume waits for its wait to open
	// (default 10 minutes).
	EarlyResume time.Duration
	// Housekeeping is how often housekeeping runs (default
	// DefaultHousekeeping).
	Housekeeping time.Duration

	// Teams configures Microsoft Teams delivery; the zero value keeps every
	// card in the outbox unless a workflow names a webhook.
	Teams        teams.Config
	TeamsOptions []teams.Option
	// TeamsTenants maps Entra tenants to the organization whose Teams
	// conversations they hold (--teams-tenants).
	TeamsTenants map[string]string
	// Secrets holds the deployment's and the organizations' secrets,
	// overriding the environment's choice (see integrations).
	Secrets secrets.Store
	// Limits bound the connections of the HTTP API and the time a request
	// and its answer may take.
	Limits Limits
	// OrgLimits are the organizations' default limits: request rate and
	// open executions; zero fields set none.
	OrgLimits cardflow.Limits
	// Tracer traces executions (nil: OTLP when the environment names a
	// collector, else none).
	Tracer trace.TracerProvider
}

// Defaults of Limits.
const (
	// DefaultMaxConns bounds the open connections of the HTTP API: a
	// client past it waits in the listen backlog until one closes.
	DefaultMaxConns = 512
	// DefaultReadHeaderTimeout is the time a client has to send a
	// request's headers, counted from its first byte (or from the end of
	// the previous request), however slowly they trickle in.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout is the time a client has to send a whole request,
	// body included (at most 256 KB).
	DefaultReadTimeout = time.Minute
	// DefaultWriteTimeout is the time from the end of a request's headers
	// to the end of its answer, so a client that stops reading cannot hold
	// its connection; handlers answer in milliseconds.
	DefaultWriteTimeout = 2 * time.Minute
	// DefaultIdleTimeout closes a kept-alive connection that sends no
	// request for this long.
	DefaultIdleTimeout = 2 * time.Minute
)

// Limits bound what clients of the HTTP API can hold, so that slow or
// many connections cannot exhaust the server. Zero fields take the
// defaults.
type Limits struct {
	MaxConns                                                  int
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// BodyBudget is the most request-body bytes the handlers hold at once
	// (httpapi.WithBodyBudget); zero takes httpapi.DefaultBodyBudget.
	BodyBudget int64
}

// serve returns the server of h with l's timeouts, and ln limited to l's
// connections, for the server to serve.
func (l Limits) serve(ln net.Listener, h http.Handler) (net.Listener, *http.Server) {
	or := func(d, def time.Duration) time.Duration {
		if d > 0 {
			return d
		}
		return def
	}
	conns := l.MaxConns
	if conns <= 0 {
		conns = DefaultMaxConns
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: or(l.ReadHeaderTimeout, DefaultReadHeaderTimeout),
		ReadTimeout:       or(l.ReadTimeout, DefaultReadTimeout),
		WriteTimeout:      or(l.WriteTimeout, DefaultWriteTimeout),
		IdleTimeout:       or(l.IdleTimeout, DefaultIdleTimeout),
	}
	return netutil.LimitListener(ln, conns), srv
}

// OpenService opens the store, creating the data directory, and returns the
// service over it. Close it with svc.Store().Close().
//
// The environment chooses the store: CARDFLOW_STORE is bbolt (the default,
// a file in the data directory) or dynamodb, which uses DYNAMODB_ENDPOINT
// (DynamoDB Local; unset means AWS as the environment configures it) and
// the tables named with CARDFLOW_TABLE_PREFIX (default cardflow-dev-).
func OpenService(dataDir string) (*app.Service, error) {
	checker, err := newChecker()
	if err != nil {
		return nil, err
	}
	store, err := openStore(dataDir)
	if err != nil {
		return nil, err
	}
	svc, err := app.New(store, app.Deps{Checker: checker, CardChecker: cards.Checker{}, CardExpander: cards.Checker{}})
	if err != nil {
		store.Close()
		return nil, err
	}
	return svc, nil
}

// openDynamoDB connects to DynamoDB. At a DynamoDB Local endpoint it first
// creates the tables that are missing, so a local run needs no setup step.
func openDynamoDB() (*dynamostore.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	prefix := os.Getenv("CARDFLOW_TABLE_PREFIX")
	if prefix == "" {
		prefix = dynamostore.DefaultPrefix
	}
	client, err := dynamoclient.New(ctx, endpoint, "")
	if err != nil {
		return nil, err
	}
	if endpoint != "" {
		if _, err := dynamostore.CreateTables(ctx, client, prefix); err != nil {
			return nil, fmt.Errorf("DynamoDB at %s (is DynamoDB Local running? `make dynamodb-local` starts one): %w", endpoint, err)
		}
	}
	return dynamostore.New(client, dynamostore.WithTablePrefix(prefix))
}

// openStore creates the data directory and opens the store the environment
// chooses (see OpenService).
func openStore(dataDir string) (cardflow.Store, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	switch kind := os.Getenv("CARDFLOW_STORE"); kind {
	case "", "bbolt":
		return boltstore.Open(filepath.Join(dataDir, StoreFile))
	case "dynamodb":
		return openDynamoDB()
	default:
		return nil, fmt.Errorf("CARDFLOW_STORE=%s: want bbolt or dynamodb", kind)
	}
}

// openOutbox returns the local outbox: the embedded store itself, or a file
// of its own beside a DynamoDB store.
func openOutbox(dataDir string, store cardflow.Store) (*boltstore.Store, error) {
	if b, ok := store.(*boltstore.Store); ok {
		return b, nil
	}
	return boltstore.Open(filepath.Join(dataDir, OutboxFile))
}

// integrations configures the outbound calls of http and erp steps and of
// Teams deliveries from the environment: CARDFLOW_OUTBOUND_ALLOW lists the
// private addresses they may call (none by default, as on AWS), and
// CARDFLOW_SECRETS, the CARDFLOW_SECRET_<ORG>__<NAME> and
// CARDFLOW_DEPLOYMENT_SECRET_<NAME> variables and CARDFLOW_SECRETS_DIR say
// where secrets come from.
func integrations() (*http.Client, secrets.Store, error) {
	client, err := outbound.FromEnv()
	if err != nil {
		return nil, nil, err
	}
	src, err := secrets.FromEnv(context.Background(), smclient.New)
	if err != nil {
		return nil, nil, err
	}
	return client, src, nil
}

// Stack is the service with everything that runs executions in process:
// the engine, the runner, the scheduler and the outbox.
type Stack struct {
	Store     cardflow.Store
	Outbox    *boltstore.Store
	Service   *app.Service
	Runner    *localrunner.Runner
	Scheduler *localscheduler.Scheduler
	// Changes wakes the requests that wait for an execution to change.
	Changes *localrunner.Changes
	// Teams delivers cards (to the outbox by default) and checks answers.
	Teams *teams.Integration
	// Metrics are served at MetricsPath.
	Metrics *promstats.Metrics

	housekeeper *housekeeper
	events      *events
	bulk        *bulkWorker
}

// NewStack builds the stack over an open store and outbox (which may be the
// same). Close stops it and closes both. The scheduler's loop starts with
// Start.
func NewStack(store cardflow.Store, outbox *boltstore.Store, cfg Config) (*Stack, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	changes := localrunner.NewChanges()
	events, err := newEvents(store, cfg.Log)
	if err != nil {
		return nil, err
	}
	notify := events.notifier(changes)
	metrics, obs := cfg.observer()
	eng, tm, err := newEngine(store, outbox, cfg, engine.WithNotifier(notify), engine.WithObserver(obs))
	if err != nil {
		return nil, err
	}
	early := cfg.earlyResume()
	st := &Stack{Store: store, Outbox: outbox, Teams: tm, Changes: changes, Metrics: metrics, events: events}
	if st.Runner, err = localrunner.New(eng, store, localrunner.WithLogger(cfg.Log), localrunner.WithNotifier(notify)); err != nil {
		return nil, err
	}
	fire := func(ctx context.Context, sc *cardflow.Schedule, at time.Time) error {
		_, err := st.Service.StartScheduled(ctx, sc, at)
		return err
	}
	if st.Scheduler, err = localscheduler.New(fire, localscheduler.WithLogger(cfg.Log)); err != nil {
		return nil, err
	}
	opts := []app.Option{app.WithEarlyResumeWindow(early), app.WithLogger(cfg.Log), app.WithWatcher(changes), app.WithNotifier(notify),
		app.WithLimits(cfg.OrgLimits, tokenbucket.New(nil)), app.WithObserver(obs), app.WithTeamsTenants(cfg.TeamsTenants)}
	st.bulk = newBulkWorker(cfg.Log)
	deps := app.Deps{Checker: eng, CardChecker: cards.Checker{}, CardExpander: cards.Checker{}, Runner: st.Runner, Scheduler: st.Scheduler,
		Deliverer: tm, BulkKick: st.bulk.kick}
	if tm.HasBot() {
		deps.BotVerifier, deps.BotReplier = tm, tm
	}
	if tm.HasLinks() {
		deps.LinkVerifier, deps.CardReader, deps.LinkIssuer = tm, cards.Reader{}, tm
	}
	st.Service, err = app.New(store, deps, opts...)
	if err != nil {
		return nil, err
	}
	st.housekeeper = newHousekeeper(st.Service.Runs, cfg.Housekeeping, cfg.Log)
	st.bulk.runs = st.Service.Runs
	return st, nil
}

// NewEngine returns the engine of local mode over store, with cards going
// to Teams as cfg.Teams and each workflow say, and otherwise to deliver;
// other runners (Step Functions in tests) drive it too.
func NewEngine(store cardflow.Store, deliver cardflow.Deliverer, cfg Config) (*engine.Engine, error) {
	eng, _, err := newEngine(store, deliver, cfg)
	return eng, err
}

// newEngine is NewEngine that also returns the Teams integration, which the
// answer endpoints need.
func newEngine(store cardflow.Store, deliver cardflow.Deliverer, cfg Config, opts ...engine.Option) (*engine.Engine, *teams.Integration, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	env, err := expr.NewEnv()
	if err != nil {
		return nil, nil, err
	}
	client, sec, err := integrations()
	if err != nil {
		return nil, nil, err
	}
	if cfg.Secrets != nil {
		sec = cfg.Secrets
	}
	organizations := func(org string) teams.Secrets { return secrets.ForOrganization(sec, org) }
	tm, err := teams.New(cfg.Teams, deliver, secrets.ForDeployment(sec), organizations, append([]teams.Option{teams.WithHTTPClient(client)}, cfg.TeamsOptions...)...)
	if err != nil {
		return nil, nil, err
	}
	opts = append([]engine.Option{engine.WithLogger(cfg.Log), engine.WithEarlyResumeWindow(cfg.earlyResume()),
		engine.WithHTTPClient(client), engine.WithSecrets(sec)}, opts...)
	eng, err := engine.New(store, tm, env, opts...)
	if err != nil {
		return nil, nil, err
	}
	return eng, tm, nil
}

// newChecker returns the workflow checker of a service that saves
// workflows but runs none.
func newChecker() (*engine.Checker, error) {
	env, err := expr.NewEnv()
	if err != nil {
		return nil, err
	}
	return engine.NewChecker(env)
}

func (cfg Config) earlyResume() time.Duration {
	if cfg.EarlyResume == 0 {
		return engine.DefaultEarlyResume
	}
	return cfg.EarlyResume
}

// Start picks up the executions the store has open, arms its schedules and
// starts housekeeping. It returns how many executions it picked up.
func (st *Stack) Start(ctx context.Context) (int, error) {
	n, err := st.Runner.Recover(ctx)
	if err != nil {
		return 0, fmt.Errorf("recover open executions: %w", err)
	}
	if err := st.Scheduler.Load(ctx, st.Store); err != nil {
		return 0, fmt.Errorf("load schedules: %w", err)
	}
	st.Scheduler.Start()
	st.housekeeper.start()
	st.events.start()
	st.bulk.start()
	return n, nil
}

// Close stops housekeeping, the scheduler and the runner, then closes the
// stores.
func (st *Stack) Close() error {
	st.Changes.Close()
	st.housekeeper.stop()
	st.events.stop()
	st.bulk.stop()
	st.Scheduler.Close()
	st.Runner.Close()
	if cardflow.Store(st.Outbox) != st.Store {
		st.Outbox.Close()
	}
	return st.Store.Close()
}

// Run serves until ctx is cancelled, then shuts down cleanly. Executions
// left open by an earlier process, even one that was killed, go on. It
// listens before it touches the data directory, so an address in use ends
// it with nothing written.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("%s is in use, by another cardflow serve or another program: stop it, or listen elsewhere (PORT, HOST or --addr)", cfg.Addr)
	}
	if err != nil {
		return err
	}
	defer ln.Close()
	store, err := openStore(cfg.DataDir)
	if err != nil {
		return err
	}
	outbox, err := openOutbox(cfg.DataDir, store)
	if err != nil {
		store.Close()
		return err
	}
	if cfg, err = withLocalLinks(cfg, baseURL(ln.Addr())); err != nil {
		store.Close()
		return err
	}
	cfg, stopTracing, err := withTracing(ctx, cfg)
	if err != nil {
		store.Close()
		return err
	}
	defer stopTracing()
	st, err := NewStack(store, outbox, cfg)
	if err != nil {
		store.Close()
		return err
	}
	defer st.Close()
	svc := st.Service
	if err := seed(ctx, svc, cfg, baseURL(ln.Addr())); err != nil {
		return fmt.Errorf("load demo data: %w", err)
	}
	n, err := st.Start(ctx)
	if err != nil {
		return err
	}
	budget := cfg.Limits.BodyBudget
	if budget <= 0 {
		budget = httpapi.DefaultBodyBudget
	}
	api, err := httpapi.New(svc, httpapi.KeyAuthenticator{Service: svc}, httpapi.WithLogger(cfg.Log), httpapi.WithOutbox(st.Outbox), httpapi.WithTeams(), httpapi.WithApprovalLinks(),
		httpapi.WithBodyBudget(budget, httpapi.DefaultBodyWait))
	if err != nil {
		return err
	}

	// The embedded store's file lock proves no other server uses this
	// directory, so a socket file left here is stale. (DynamoDB takes no
	// lock: run one server per data directory.)
	sockPath := filepath.Join(cfg.DataDir, SocketFile)
	os.Remove(sockPath)
	sock, err := net.Listen("unix", sockPath)
	if err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	if err := os.Chmod(sockPath, 0o600); err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}

	ui, err := console.New()
	if err != nil {
		return err
	}
	token, err := metricsToken(cfg.DataDir)
	if err != nil {
		return err
	}
	limited, srv := cfg.Limits.serve(ln, console.Mount(ui, withMetrics(withSchemas(api), st.Metrics.Handler(), token)))
	admin := &http.Server{Handler: keyadmin.Handler(svc), ReadHeaderTimeout: 10 * time.Second}
	// Logged before serving, so that whoever gets an answer has the line.
	cfg.Log.Info("cardflow listening", slog.String("addr", ln.Addr().String()), slog.String("data_dir", cfg.DataDir), slog.Int("open_executions", n))
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(limited) }()
	go func() { errc <- admin.Serve(sock) }()

	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Waiting requests answer now, so that they do not hold the shutdown.
	st.Changes.Close()
	// Past the deadline the servers close anyway; the error says no more.
	_ = srv.Shutdown(shutdownCtx)
	_ = admin.Shutdown(shutdownCtx)
	os.Remove(sockPath)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	cfg.Log.Info("cardflow stopped")
	return err
}

// baseURL is the address of the API that listens on addr, as a client on
// this machine reaches it.
func baseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); err != nil || ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// The lines of demo.env that the cardflow CLI reads start so.
const (
	demoKeyLine = "export CARDFLOW_API_KEY="
	demoURLLine = "export CARDFLOW_URL="
)

// seed creates the demo tenant, its key and the sample data, once: a data
// directory that already has a demo key keeps it, and only its demo.env
// learns the address the API listens on now.
func seed(ctx context.Context, svc *app.Service, cfg Config, url string) error {
	keys, err := svc.ListKeys(ctx, DemoOrganization)
	if err != nil {
		return err
	}
	if len(keys) > 0 {
		return updateDemoURL(filepath.Join(cfg.DataDir, DemoEnvFile), url)
	}
	admin := &cardflow.Principal{OrganizationID: DemoOrganization, WorkspaceID: DemoWorkspace, Scopes: cardflow.AllScopes, Actor: "demo-admin"}
	ids, err := sample.Load(cardflow.NewContextWithPrincipal(ctx, admin), svc)
	if err != nil {
		return err
	}
	key, _, err := svc.CreateKey(ctx, app.CreateKeyInput{OrganizationID: DemoOrganization, WorkspaceID: DemoWorkspace, Scopes: cardflow.AllScopes, Name: "demo-admin"})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.DataDir, DemoKeyFile), []byte(key+"\n"), 0o600); err != nil {
		return err
	}
	env := fmt.Sprintf("KEY=%s\nWORKFLOW_ID=%s\nSCHEDULED_WORKFLOW_ID=%s\nONBOARDING_WORKFLOW_ID=%s\nTWO_APPROVER_WORKFLOW_ID=%s\nCARD_ID=%s\nEXECUTION_ID=%s\n%s%s\n%s%s\n",
		key, ids.ApprovalWorkflowID, ids.ScheduleWorkflowID, ids.OnboardingWorkflow, ids.TwoApproverWorkflowID, ids.ApprovalCardID, ids.ExecutionID, demoKeyLine, key, demoURLLine, url)
	if err := os.WriteFile(filepath.Join(cfg.DataDir, DemoEnvFile), []byte(env), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "\nDemo organization %q created with sample workflows and cards.\nDemo API key (shown once, also in %s):\n\n    %s\n\n",
		DemoOrganization, filepath.Join(cfg.DataDir, DemoKeyFile), key)
	return nil
}

// updateDemoURL points the CARDFLOW_URL line of demo.env at url, adding
// the CLI's lines to a file written before it had them. A missing file is
// left missing (a DynamoDB store may have its demo key from another data
// directory).
func updateDemoURL(path, url string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var out strings.Builder
	key, hasKey := "", false
	for _, l := range strings.SplitAfter(string(b), "\n") {
		switch {
		case strings.HasPrefix(l, demoURLLine):
			continue
		case strings.HasPrefix(l, "KEY="):
			key = strings.TrimSpace(strings.TrimPrefix(l, "KEY="))
		case strings.HasPrefix(l, demoKeyLine):
			hasKey = true
		}
		out.WriteString(l)
	}
	if !hasKey && key != "" {
		out.WriteString(demoKeyLine + key + "\n")
	}
	out.WriteString(demoURLLine + url + "\n")
	if out.String() == string(b) {
		return nil
	}
	return os.WriteFile(path, []byte(out.String()), 0o600)
}

// withSchemas serves the schema of apply documents (package schemas)
// before api: it is public, as editors fetch it without a key.
func withSchemas(api http.Handler) http.Handler {
	schema := schemas.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == schemas.Path {
			schema.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}
