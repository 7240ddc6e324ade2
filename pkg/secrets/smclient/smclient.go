// Package smclient builds Secrets Manager clients from the standard AWS
// configuration of the environment, for local mode (a secrets.ClientFunc).
// It is apart from pkg/secrets because the SDK's configuration loader links
// the SSO, STS and sign-in clients, which the engine, and so every Lambda
// function that links it, would carry otherwise.
package smclient

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// New returns a Secrets Manager client with the AWS configuration of the
// environment (region, credentials, profile), adjusted by optFns.
func New(ctx context.Context, optFns ...func(*secretsmanager.Options)) (*secretsmanager.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	return secretsmanager.NewFromConfig(cfg, optFns...), nil
}
