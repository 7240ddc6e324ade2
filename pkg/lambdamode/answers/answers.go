// Package answers wires the functions Microsoft Teams sends card answers
// to: teamsMessages (the bot's messaging endpoint) and teamsRespond
// (response links). They check what arrives themselves, read the signing
// key and the bot's secret from the secrets the environment names, and
// wake the answered execution on the Step Functions runner. They link
// neither the engine nor CEL.
package answers

import (
	"context"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/runner"
	"github.com/cardflow/cardflow/pkg/lambdamode/secretsclient"
	"github.com/cardflow/cardflow/pkg/outbound"
	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/teams"
)

// ServeEndpoint is the main of the Teams function of ep
// (httpapi.TeamsMessages or httpapi.TeamsRespond), with wirings.
func ServeEndpoint(ep httpapi.Endpoint, wirings ...lambdamode.Wiring) {
	lambdamode.Serve(ep.Name, func(env lambdamode.Env, log *slog.Logger) (*lambdamode.Endpoint, error) {
		var deps app.Deps
		for _, w := range wirings {
			if err := w(env, log, &deps); err != nil {
				return nil, err
			}
		}
		return NewEndpointFunction(env, log, ep.Name, deps)
	})
}

// NewEndpointFunction builds the Teams function named (lambdamode.TeamsMessages
// or lambdamode.TeamsRespond) with deps, which its main.go picks: the card
// reader of teamsRespond's pages stays out of teamsMessages. optFns adjust
// the Step Functions client.
func NewEndpointFunction(env lambdamode.Env, log *slog.Logger, name string, deps app.Deps, optFns ...func(*sfn.Options)) (*lambdamode.Endpoint, error) {
	client, err := outbound.FromEnv()
	if err != nil {
		return nil, err
	}
	sec, err := secrets.FromEnv(context.Background(), secretsclient.New(env))
	if err != nil {
		return nil, err
	}
	// These functions deliver no cards: they read the deployment's
	// secrets only, and template.yaml lets them read no organization's.
	tm, err := env.NewTeams(log, secrets.ForDeployment(sec), func(org string) teams.Secrets { return secrets.ForOrganization(sec, org) }, client)
	if err != nil {
		return nil, err
	}
	if deps.Runner, err = runner.New(env, log, optFns...); err != nil {
		return nil, err
	}
	return env.NewTeamsFunction(log, name, tm, deps)
}
