// Package secretsclient builds the Secrets Manager client of a Lambda
// function. It is a package of its own so that only the functions that
// read secrets (Advance and the Teams answers) link the client.
package secretsclient

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/secrets"
)

// New returns the secrets.ClientFunc of a function: a Secrets Manager
// client with the function's region and role, from the environment Lambda
// provides, as the other SDK clients are.
func New(env lambdamode.Env) secrets.ClientFunc {
	return func(_ context.Context, optFns ...func(*secretsmanager.Options)) (*secretsmanager.Client, error) {
		return secretsmanager.New(secretsmanager.Options{Region: env.Region, Credentials: env.Credentials()}, optFns...), nil
	}
}
