package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/evalslots"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/teams"
)

const serveAbout = `Runs the whole service in this process: the HTTP API of openapi.yaml, the
executions, schedules and an outbox for the cards. Records are kept in the
embedded store in the data directory, or in DynamoDB with
CARDFLOW_STORE=dynamodb (DYNAMODB_ENDPOINT, CARDFLOW_TABLE_PREFIX). On first
start it creates the demo organization, its sample data and an API key with
every scope, written to DATA_DIR/demo-key and DATA_DIR/demo.env.

It listens on 127.0.0.1 only, since that demo key sits on disk; HOST=0.0.0.0
or --addr :3000 makes it reachable from other machines. Ctrl-C (SIGINT) or
SIGTERM stops it cleanly.
`

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCommand("serve", "", serveAbout, stdout)
	dataDir := c.dataDir()
	addr := c.String("addr", net.JoinHostPort(envOr("HOST", "127.0.0.1"), envOr("PORT", "3000")), "HTTP listen address, host:port; env HOST and PORT")
	early := c.String("early-resume", envOr("CARDFLOW_EARLY_RESUME", "10m"), "how long a resume waits for its execution to reach the wait; env CARDFLOW_EARLY_RESUME")
	tf := teamsFlags(c.FlagSet)
	pprofAddr := c.String("pprof", "", "serve runtime profiles (net/http/pprof) on this loopback address, e.g. 127.0.0.1:6060")
	contention := c.Bool("pprof-contention", os.Getenv("CARDFLOW_PPROF_CONTENTION") == "1", "with --pprof, also record where goroutines block and wait for locks (the block and mutex profiles); env CARDFLOW_PPROF_CONTENTION=1")
	maxConns := c.String("max-conns", envOr("CARDFLOW_MAX_CONNS", strconv.Itoa(localmode.DefaultMaxConns)), "most open connections of the HTTP API; more wait until one closes; env CARDFLOW_MAX_CONNS")
	bodyBudget := c.String("body-budget-mb", envOr("CARDFLOW_BODY_BUDGET_MB", strconv.Itoa(httpapi.DefaultBodyBudget>>20)), "MB of request bodies the API handles at once; a request past it waits, then is answered 503; env CARDFLOW_BODY_BUDGET_MB")
	evalSlots := c.String("eval-slots", envOr("CARDFLOW_EVAL_SLOTS", strconv.Itoa(evalslots.Limit())), "expression evaluations and card expansions run at once; more wait for one to end (default: the CPUs the process uses); env CARDFLOW_EVAL_SLOTS")
	orgRate := c.String("org-rate", os.Getenv(cardflow.EnvOrgRate), "requests a second each organization's keys may make together (none when empty); env "+cardflow.EnvOrgRate)
	orgBurst := c.String("org-burst", os.Getenv(cardflow.EnvOrgBurst), "requests an organization may make at once above its rate (default: one second's worth); env "+cardflow.EnvOrgBurst)
	orgMaxOpen := c.String("org-max-open", os.Getenv(cardflow.EnvOrgMaxOpen), "open executions an organization may have; a trigger past it is refused (none when empty); env "+cardflow.EnvOrgMaxOpen)
	if _, err := c.parse(args, 0); err != nil {
		return err
	}
	orgLimits, err := cardflow.ParseLimits(*orgRate, *orgBurst, *orgMaxOpen)
	if err != nil {
		return err
	}
	conns, err := strconv.Atoi(*maxConns)
	if err != nil || conns <= 0 {
		return fmt.Errorf("--max-conns (CARDFLOW_MAX_CONNS) %q is not a positive whole number such as %d", *maxConns, localmode.DefaultMaxConns)
	}
	budget, err := strconv.Atoi(*bodyBudget)
	if err != nil || budget <= 0 {
		return fmt.Errorf("--body-budget-mb (CARDFLOW_BODY_BUDGET_MB) %q is not a positive whole number of MB such as %d", *bodyBudget, httpapi.DefaultBodyBudget>>20)
	}
	slots, err := strconv.Atoi(*evalSlots)
	if err != nil || evalslots.SetLimit(slots) != nil {
		return fmt.Errorf("--eval-slots (CARDFLOW_EVAL_SLOTS) %q is not a positive whole number such as %d", *evalSlots, evalslots.Limit())
	}
	d, err := time.ParseDuration(*early)
	if err != nil || d <= 0 {
		return fmt.Errorf("--early-resume (CARDFLOW_EARLY_RESUME) %q is not a positive duration such as 10m", *early)
	}
	tc, err := tf.config()
	if err != nil {
		return err
	}
	tenants, err := teams.ParseTenants(*tf.tenants)
	if err != nil {
		return fmt.Errorf("--teams-tenants (%s): %v", teams.EnvTenants, err)
	}
	log := newLogger(stderr)
	if *contention && *pprofAddr == "" {
		return errors.New("--pprof-contention needs --pprof: the block and mutex profiles are served there")
	}
	if *pprofAddr != "" {
		if err := startPprof(ctx, *pprofAddr, *contention, log); err != nil {
			return err
		}
	}
	setMemoryLimit()
	return localmode.Run(ctx, localmode.Config{Addr: *addr, DataDir: *dataDir, Out: stdout, Log: log, EarlyResume: d, Teams: tc, TeamsTenants: tenants,
		Limits: localmode.Limits{MaxConns: conns, BodyBudget: int64(budget) << 20}, OrgLimits: orgLimits})
}

// defaultMemoryLimit is the server's soft memory limit when GOMEMLIMIT
// does not set one; docs/DECISIONS.md says why this figure.
const defaultMemoryLimit = 128 << 20

// setMemoryLimit makes the collector work harder as the heap nears
// defaultMemoryLimit, so that the garbage of many requests at once does
// not pile up to twice the live heap. GOMEMLIMIT, when set, wins (the
// runtime has read it already).
func setMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}

// teamsSettings are the serve flags of the Microsoft Teams integration.
type teamsSettings struct {
	publicURL, signing, linkTTL, appID, appSecret, tokenURL, openID, hosts, tenants *string
}

func teamsFlags(fs *flag.FlagSet) *teamsSettings {
	return &teamsSettings{
		publicURL: fs.String("public-url", os.Getenv("CARDFLOW_PUBLIC_URL"), "the service's address as people reach it, for Teams response links"),
		signing:   fs.String("teams-signing-secret", os.Getenv("CARDFLOW_TEAMS_SIGNING_SECRET"), "name of the secret holding the key that signs Teams response links and bot card data"),
		linkTTL:   fs.String("teams-link-ttl", envOr("CARDFLOW_TEAMS_LINK_TTL", "336h"), "how long a Teams response link works"),
		appID:     fs.String("teams-app-id", os.Getenv("CARDFLOW_TEAMS_APP_ID"), "the Teams bot's Microsoft app id (enables POST /v1/teams/messages)"),
		appSecret: fs.String("teams-app-secret", os.Getenv("CARDFLOW_TEAMS_APP_SECRET"), "name of the secret holding the bot's client secret"),
		tokenURL:  fs.String("teams-token-url", envOr("CARDFLOW_TEAMS_TOKEN_URL", teams.DefaultTokenURL), "the bot's OAuth2 token endpoint"),
		openID:    fs.String("teams-openid-url", envOr("CARDFLOW_TEAMS_OPENID_URL", teams.DefaultOpenIDMetadataURL), "OpenID metadata of the Bot Framework's token signing keys"),
		hosts:     fs.String("teams-service-hosts", envOr("CARDFLOW_TEAMS_SERVICE_HOSTS", strings.Join(teams.DefaultServiceHosts, ",")), "Bot Connector hosts a conversation's service URL may name (a leading dot allows subdomains)"),
		tenants:   fs.String("teams-tenants", os.Getenv(teams.EnvTenants), "Microsoft Entra tenants whose Teams conversations belong to one organization each, as tenant=organization pairs, comma-separated"),
	}
}

func (t *teamsSettings) config() (teams.Config, error) {
	ttl, err := time.ParseDuration(*t.linkTTL)
	if err != nil || ttl <= 0 {
		return teams.Config{}, fmt.Errorf("--teams-link-ttl (CARDFLOW_TEAMS_LINK_TTL) %q is not a positive duration such as 336h", *t.linkTTL)
	}
	if *t.appID != "" && (*t.appSecret == "" || *t.signing == "") {
		return teams.Config{}, fmt.Errorf("--teams-app-id needs --teams-app-secret and --teams-signing-secret (secret names)")
	}
	var hosts []string
	for _, h := range strings.Split(*t.hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	return teams.Config{
		PublicURL: *t.publicURL, SigningSecret: *t.signing, LinkTTL: ttl,
		AppID: *t.appID, AppSecret: *t.appSecret, TokenURL: *t.tokenURL,
		OpenIDMetadataURL: *t.openID, ServiceHosts: hosts,
	}, nil
}
