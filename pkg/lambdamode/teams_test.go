package lambdamode

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/teams"
)

// TestNewTeamsFunction checks that a Teams function starts only when its
// part of Teams is configured.
func TestNewTeamsFunction(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	bot := teams.Config{AppID: "app", AppSecret: "bot-secret", SigningSecret: "teams-signing"}
	links := teams.Config{SigningSecret: "teams-signing"}
	for _, c := range []struct {
		name string
		cfg  teams.Config
		err  string
	}{
		{TeamsMessages, bot, ""},
		{TeamsRespond, bot, ""},
		{TeamsRespond, links, ""},
		{TeamsMessages, links, "teamsMessages serves the Teams bot, and CARDFLOW_TEAMS_APP_ID is not set"},
		{TeamsRespond, teams.Config{}, "teamsRespond answers response links, and CARDFLOW_TEAMS_SIGNING_SECRET is not set"},
		{"teamsOther", bot, `no Teams function "teamsOther"`},
	} {
		env := Env{Region: "us-east-1", DynamoDBEndpoint: "http://127.0.0.1:1", TablePrefix: "t-", Teams: c.cfg}
		tm, err := env.NewTeams(log, secrets.ForDeployment(secrets.Env{}), func(org string) teams.Secrets { return secrets.ForOrganization(secrets.Env{}, org) }, http.DefaultClient)
		if err != nil {
			t.Fatal(err)
		}
		// NewTeamsFunction fails unless the API serves every route of the function.
		_, err = env.NewTeamsFunction(log, c.name, tm, app.Deps{Runner: stillRunner{}})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s with %+v: err = %v, want one with %q", c.name, c.cfg, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s with %+v: %v", c.name, c.cfg, err)
		}
	}
}
