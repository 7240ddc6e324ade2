package lambdamode

import (
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/cardflow/cardflow/pkg/dynamostore"
)

// Credentials returns the credentials SDK clients sign with: the role's,
// from the environment as Lambda provides them. Building them from the
// environment rather than with the SDK's config loader keeps the SSO, STS
// and sign-in clients out of every binary, which is a megabyte and a slower
// start per function.
func (e Env) Credentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider(e.AccessKeyID, e.SecretAccessKey, e.SessionToken)
}

// DynamoDBClient returns a DynamoDB client; it connects on first use. At a
// DynamoDB Local endpoint it signs with fake credentials.
func (e Env) DynamoDBClient() *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:      e.Region,
		Credentials: e.Credentials(),
	}, func(o *dynamodb.Options) {
		if e.DynamoDBEndpoint != "" {
			o.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
			o.BaseEndpoint = aws.String(e.DynamoDBEndpoint)
			// DynamoDB Local sends no CRC32 header with error responses.
			o.DisableValidateResponseChecksum = true
		}
	})
}

// OpenStore returns the DynamoDB store of the configured tables.
func (e Env) OpenStore(log *slog.Logger) (*dynamostore.Store, error) {
	return dynamostore.New(e.DynamoDBClient(), dynamostore.WithTablePrefix(e.TablePrefix), dynamostore.WithLogger(log))
}
