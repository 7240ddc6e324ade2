package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/dynamostore/dynamoclient"
)

// dynamoDB returns DYNAMODB_ENDPOINT and a table prefix of the test's own,
// whose tables are deleted when the test ends. Without an endpoint the test
// is skipped (testenv.DynamoDB).
func dynamoDB(t *testing.T) (endpoint, prefix string) {
	t.Helper()
	endpoint = testenv.DynamoDB(t)
	prefix = "cardflow-test-" + strings.ToLower(cardflow.NewID(time.Now())) + "-"
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		client, err := dynamoclient.New(ctx, endpoint, "")
		if err != nil {
			t.Error(err)
			return
		}
		for _, def := range dynamostore.Tables(prefix) {
			client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: def.Input.TableName})
		}
	})
	return endpoint, prefix
}

func TestTablesCreate(t *testing.T) {
	endpoint, prefix := dynamoDB(t)
	for _, want := range []string{"created", "exists"} {
		var stdout, stderr bytes.Buffer
		if err := run(t.Context(), []string{"tables", "create", "--endpoint", endpoint, "--prefix", prefix}, &stdout, &stderr); err != nil {
			t.Fatalf("tables create: %v\n%s", err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		if got, want := len(lines), len(dynamostore.Tables(prefix)); got != want {
			t.Errorf("tables create: got %d lines, want one per table (%d):\n%s", got, want, stdout.String())
		}
		for _, line := range lines {
			if !strings.HasPrefix(line, prefix) || !strings.HasSuffix(line, "\t"+want) {
				t.Errorf("tables create: got line %q, want a table of prefix %s that %s", line, prefix, want)
			}
		}
	}
}

func TestTablesUsage(t *testing.T) {
	for _, args := range [][]string{{"tables"}, {"tables", "drop"}, {"tables", "create", "extra"}, {"tables", "create", "--prefix", "bad prefix"}} {
		var stdout, stderr bytes.Buffer
		if err := run(t.Context(), args, &stdout, &stderr); err == nil {
			t.Errorf("%q: got no error, want one", args)
		}
	}
}

// TestLocalModeDynamoDB runs `cardflow serve` on DynamoDB Local: it creates
// its tables, loads the demo data once, serves it, manages keys and keeps
// everything across a restart.
func TestLocalModeDynamoDB(t *testing.T) {
	endpoint, prefix := dynamoDB(t)
	t.Setenv("CARDFLOW_STORE", "dynamodb")
	t.Setenv("DYNAMODB_ENDPOINT", endpoint)
	t.Setenv("CARDFLOW_TABLE_PREFIX", prefix)
	bin := binary(t)
	dataDir := filepath.Join(t.TempDir(), ".cardflow")
	port := freePort(t)

	srv := startServer(t, bin, dataDir, port)
	keyFile, err := os.ReadFile(filepath.Join(dataDir, "demo-key"))
	if err != nil {
		t.Fatal(err)
	}
	demoKey := strings.TrimSpace(string(keyFile))
	listWorkflows := srv.base + "/v1/workflows/getOrganizationWorkflows?limit=30"
	workflows := count(t, listWorkflows, demoKey)
	if workflows < 6 {
		t.Errorf("got %v sample workflow versions, want at least 6", workflows)
	}
	key, err := cli(t, bin, dataDir, "keys", "create", "--org", "acme", "--workspace", "finance", "--scopes", "read")
	if err != nil {
		t.Fatal(err)
	}
	if got := getStatus(t, listWorkflows, strings.TrimSpace(key)); got != 200 {
		t.Errorf("new key: got %d, want 200", got)
	}
	srv.stop(t)

	// Without a server the CLI reaches the tables itself.
	if list, err := cli(t, bin, dataDir, "keys", "list", "--org", "acme"); err != nil || !strings.Contains(list, strings.Split(key, "_")[1]) {
		t.Errorf("keys list without a server: got %q, %v; want the new key's id", list, err)
	}

	srv = startServer(t, bin, dataDir, port)
	if got := count(t, listWorkflows, demoKey); got != workflows {
		t.Errorf("after restart: got %v workflow versions, want %v", got, workflows)
	}
	if strings.Contains(srv.stdout(t), "Demo API key") {
		t.Errorf("restart printed a new demo key")
	}
	srv.stop(t)
}
