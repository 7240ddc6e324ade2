package lambdamode

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/teams"
)

// Environment variables of the Microsoft Teams integration, the same names
// `cardflow serve` reads. Secrets are named, never given: their values
// live in Secrets Manager among the deployment's secrets
// (<prefix>deployment/<name>), which no workflow can name.
const (
	EnvPublicURL          = "CARDFLOW_PUBLIC_URL"
	EnvTeamsSigningSecret = "CARDFLOW_TEAMS_SIGNING_SECRET"
	EnvTeamsLinkTTL       = "CARDFLOW_TEAMS_LINK_TTL"
	EnvTeamsAppID         = "CARDFLOW_TEAMS_APP_ID"
	EnvTeamsAppSecret     = "CARDFLOW_TEAMS_APP_SECRET"
	EnvTeamsTokenURL      = "CARDFLOW_TEAMS_TOKEN_URL"
	EnvTeamsOpenIDURL     = "CARDFLOW_TEAMS_OPENID_URL"
	EnvTeamsServiceHosts  = "CARDFLOW_TEAMS_SERVICE_HOSTS"
)

// Names of the functions Microsoft Teams answers cards through, those of
// httpapi.TeamsEndpoints. They check a Bot Framework JWT or a link's
// signature themselves, so API Gateway calls them without the API key
// authorizer.
const (
	TeamsMessages = "teamsMessages"
	TeamsRespond  = "teamsRespond"
)

// loadTeams reads the Teams settings; empty ones take the defaults of
// pkg/teams. The public URL must be https, as response links carry signed
// tokens, except in a local run (local: against DynamoDB Local).
func loadTeams(getenv func(string) string, local bool) (teams.Config, error) {
	cfg := teams.Config{
		PublicURL:         getenv(EnvPublicURL),
		SigningSecret:     getenv(EnvTeamsSigningSecret),
		AppID:             getenv(EnvTeamsAppID),
		AppSecret:         getenv(EnvTeamsAppSecret),
		TokenURL:          getenv(EnvTeamsTokenURL),
		OpenIDMetadataURL: getenv(EnvTeamsOpenIDURL),
	}
	if v := cfg.PublicURL; v != "" {
		u, err := url.Parse(v)
		switch {
		case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
			return teams.Config{}, fmt.Errorf("%s=%q: want an https URL such as https://cardflow.example.com", EnvPublicURL, v)
		case u.Scheme == "http" && !local:
			return teams.Config{}, fmt.Errorf("%s=%q: on AWS the public URL must be https, as its response links carry signed tokens; http is for local runs against DynamoDB Local (%s)", EnvPublicURL, v, EnvDynamoDBEndpoint)
		}
	}
	if v := getenv(EnvTeamsLinkTTL); v != "" {
		ttl, err := time.ParseDuration(v)
		if err != nil || ttl <= 0 {
			return teams.Config{}, fmt.Errorf("%s=%q: want a positive duration such as 336h", EnvTeamsLinkTTL, v)
		}
		cfg.LinkTTL = ttl
	}
	if cfg.AppID != "" && (cfg.AppSecret == "" || cfg.SigningSecret == "") {
		return teams.Config{}, fmt.Errorf("%s is set: the bot also needs %s and %s (secret names)", EnvTeamsAppID, EnvTeamsAppSecret, EnvTeamsSigningSecret)
	}
	for _, h := range strings.Split(getenv(EnvTeamsServiceHosts), ",") {
		if h = strings.TrimSpace(h); h != "" {
			cfg.ServiceHosts = append(cfg.ServiceHosts, h)
		}
	}
	return cfg, nil
}

// NewTeams returns the Teams integration of the function: cards go to
// Teams as their delivery profiles say, with the deployment's secrets and
// each organization's (for webhooks) and calls through client. There is no
// outbox on AWS: cards of outbox profiles go to the log (LogDeliverer).
func (e Env) NewTeams(log *slog.Logger, deployment teams.Secrets, organizations teams.OrganizationSecrets, client *http.Client) (*teams.Integration, error) {
	opts := append([]teams.Option{teams.WithHTTPClient(client)}, e.TeamsOptions...)
	return teams.New(e.Teams, LogDeliverer{Log: log}, deployment, organizations, opts...)
}

// NewTeamsFunction builds the handler of the Teams endpoint function named
// over tm, with deps (the runner that wakes answered executions, and the
// card reader of teamsRespond's pages).
func (e Env) NewTeamsFunction(log *slog.Logger, name string, tm *teams.Integration, deps app.Deps) (*Endpoint, error) {
	switch {
	case name == TeamsMessages && tm.HasBot():
		deps.BotVerifier, deps.BotReplier = tm, tm
	case name == TeamsMessages:
		return nil, fmt.Errorf("%s serves the Teams bot, and %s is not set", name, EnvTeamsAppID)
	case name == TeamsRespond && tm.HasLinks():
		deps.LinkVerifier = tm
	case name == TeamsRespond:
		return nil, fmt.Errorf("%s answers response links, and %s is not set", name, EnvTeamsSigningSecret)
	default:
		return nil, fmt.Errorf("lambdamode: no Teams function %q", name)
	}
	svc, err := e.NewService(log, deps)
	if err != nil {
		return nil, err
	}
	area := app.AreaBot
	if name == TeamsRespond {
		area = app.AreaLinks
	}
	// Without its area the function would serve no route, or refuse every
	// request as if the bot were missing.
	if err := svc.Need(area); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if name == TeamsRespond {
		return newEndpoint(svc, log, nil, httpapi.WithResponseLinks())
	}
	return newEndpoint(svc, log, nil, httpapi.WithTeams())
}

// LogDeliverer delivers cards to the function's log, one JSON record each
// ("card delivered", with the delivery), where a CloudWatch Logs
// subscription can pick them up.
type LogDeliverer struct{ Log *slog.Logger }

// Deliver implements cardflow.Deliverer.
func (d LogDeliverer) Deliver(ctx context.Context, dl *cardflow.Delivery) error {
	d.Log.InfoContext(ctx, "card delivered", slog.Any("delivery", dl))
	return nil
}
