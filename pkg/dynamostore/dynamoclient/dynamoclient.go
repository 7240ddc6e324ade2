// Package dynamoclient builds DynamoDB clients from the standard AWS
// configuration, for the CLI, local mode and tests. It is apart from
// pkg/dynamostore because the SDK's configuration loader links the SSO, STS
// and sign-in clients, which the Lambda functions, building their client
// from the environment Lambda provides, leave out.
package dynamoclient

import (
	"context"
	"fmt"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// New returns a DynamoDB client. With an endpoint (DynamoDB Local, as
// http://localhost:8000) it signs with fake static credentials and defaults
// the region to us-east-1, so no AWS account is involved; without one it
// uses the standard AWS configuration of the environment. An empty region
// leaves the region to that configuration.
func New(ctx context.Context, endpoint, region string, optFns ...func(*dynamodb.Options)) (*dynamodb.Client, error) {
	var load []func(*config.LoadOptions) error
	if region != "" {
		load = append(load, config.WithRegion(region))
	}
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("dynamoclient: endpoint %q: want a URL such as http://localhost:8000", endpoint)
		}
		load = append(load, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("dynamoclient: load AWS configuration: %w", err)
	}
	if endpoint != "" && cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return dynamodb.NewFromConfig(cfg, append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			// DynamoDB Local sends no CRC32 header with error responses, and
			// the SDK then warns about a checksum mismatch on every failed
			// condition (aws-sdk-go-v2 issue 3545).
			o.DisableValidateResponseChecksum = true
		}
	}}, optFns...)...), nil
}
