package secrets

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"
)

// SecretsManagerAPI is the part of the Secrets Manager client this package
// uses.
type SecretsManagerAPI interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// SecretsManager reads a key as the Secrets Manager secret <prefix><key
// path> (see Key.Path), its current version: cardflow/org/acme/sap-prod
// holds the secret "sap-prod" of organization acme,
// cardflow/deployment/teams-signing a deployment's. Wrap it in a Cache.
type SecretsManager struct {
	client SecretsManagerAPI
	prefix string
}

// NewSecretsManager reads secrets through client, with ids prefix+path.
func NewSecretsManager(client SecretsManagerAPI, prefix string) (*SecretsManager, error) {
	if client == nil {
		return nil, errors.New("secrets: a Secrets Manager client is required")
	}
	return &SecretsManager{client: client, prefix: prefix}, nil
}

// SecretsManagerID is the Secrets Manager id of a valid key under prefix.
func SecretsManagerID(prefix string, k Key) string { return prefix + k.Path() }

func (s *SecretsManager) Get(ctx context.Context, k Key) (string, error) {
	if err := k.Validate(); err != nil {
		return "", err
	}
	id := SecretsManagerID(s.prefix, k)
	out, err := s.client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(id)})
	var nf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return "", fmt.Errorf("Secrets Manager has no secret %s: %w", id, ErrNotFound)
	case err != nil:
		// Service errors carry a code and message, never the value.
		var api smithy.APIError
		if errors.As(err, &api) {
			return "", fmt.Errorf("Secrets Manager secret %s: %s: %s", id, api.ErrorCode(), api.ErrorMessage())
		}
		return "", fmt.Errorf("Secrets Manager secret %s: %w", id, err)
	}
	if out.SecretString != nil && *out.SecretString != "" {
		return *out.SecretString, nil
	}
	if len(out.SecretBinary) > 0 {
		return string(out.SecretBinary), nil
	}
	return "", fmt.Errorf("Secrets Manager secret %s has no value: %w", id, ErrNotFound)
}

// Configuration from the environment.
const (
	// SourceEnv chooses the store: "env" (the default: the variables EnvName
	// names, then files in CARDFLOW_SECRETS_DIR when set) or "secretsmanager".
	SourceEnv = "CARDFLOW_SECRETS"
	// DirEnv names the directory of secret files.
	DirEnv = "CARDFLOW_SECRETS_DIR"
	// PrefixEnv starts every Secrets Manager secret id (default "cardflow/").
	PrefixEnv = "CARDFLOW_SECRETS_PREFIX"
	// EndpointEnv points the Secrets Manager client elsewhere than AWS.
	EndpointEnv = "SECRETSMANAGER_ENDPOINT"
	// DefaultPrefix starts Secrets Manager secret ids.
	DefaultPrefix = "cardflow/"
)

// PrefixFromEnv is the Secrets Manager prefix the environment sets
// (PrefixEnv, DefaultPrefix when unset).
func PrefixFromEnv() string {
	if prefix, ok := os.LookupEnv(PrefixEnv); ok {
		return prefix
	}
	return DefaultPrefix
}

// ClientFunc builds the Secrets Manager client FromEnv reads through;
// optFns carry EndpointEnv. Local mode loads the AWS configuration of the
// environment (secrets/smclient); a Lambda function builds its client from
// the environment Lambda provides, which keeps the SDK's configuration
// loader, with its SSO, STS and sign-in clients, out of its binary.
type ClientFunc func(ctx context.Context, optFns ...func(*secretsmanager.Options)) (*secretsmanager.Client, error)

// FromEnv builds the store the environment configures (see SourceEnv).
// Secrets Manager reads through the client newClient builds and caches
// values for DefaultTTL.
func FromEnv(ctx context.Context, newClient ClientFunc) (Store, error) {
	switch kind := os.Getenv(SourceEnv); kind {
	case "", "env":
		if dir := os.Getenv(DirEnv); dir != "" {
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return nil, fmt.Errorf("%s=%s is not a directory", DirEnv, dir)
			}
			return Chain{Env{}, Dir{Path: dir}}, nil
		}
		return Env{}, nil
	case "secretsmanager":
		endpoint := os.Getenv(EndpointEnv)
		if endpoint != "" {
			if u, err := url.Parse(endpoint); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
				return nil, fmt.Errorf("%s=%s: want a URL such as http://localhost:4566", EndpointEnv, endpoint)
			}
		}
		client, err := newClient(ctx, func(o *secretsmanager.Options) {
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
		})
		if err != nil {
			return nil, fmt.Errorf("secrets: Secrets Manager client: %w", err)
		}
		sm, err := NewSecretsManager(client, PrefixFromEnv())
		if err != nil {
			return nil, err
		}
		return NewCache(sm, DefaultTTL, nil), nil
	default:
		return nil, fmt.Errorf("%s=%s: want env or secretsmanager", SourceEnv, kind)
	}
}
