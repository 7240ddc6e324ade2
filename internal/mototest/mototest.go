// Package mototest gives tests the moto server that `make test` starts
// (tools/moto/run.sh): AWS's EventBridge Scheduler and Step Functions APIs
// as moto emulates them, shared by every test of the run, so each test
// names what it creates uniquely.
package mototest

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Region and Account of what moto creates: moto's default account.
const (
	Region  = "us-east-1"
	Account = "123456789012"
)

// Endpoint returns $MOTO_ENDPOINT. Without it the test is skipped
// (testenv.Moto).
func Endpoint(tb testing.TB) string {
	tb.Helper()
	return testenv.Moto(tb)
}

// Credentials are what clients sign with; moto accepts any.
func Credentials() aws.CredentialsProvider {
	return credentials.NewStaticCredentialsProvider("moto", "moto", "")
}

// Name returns a name for something a test creates, unique across tests:
// prefix, a dash and a lower-case ULID.
func Name(prefix string) string {
	return prefix + "-" + strings.ToLower(cardflow.NewID(time.Now()))
}
