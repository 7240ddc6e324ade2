// Package localmode runs the whole service in one process: the HTTP API, key
// management on a unix socket, and the demo data on first start. Records go
// to the embedded store, or to DynamoDB with CARDFLOW_STORE=dynamodb.
package localmode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/keyadmin"
	"github.com/cardflow/cardflow/pkg/sample"
)

// The demo tenant created on first start.
const (
	DemoOrganization = "demo-org"
	DemoWorkspace    = "demo-workspace"
)

// Files in the data directory.
const (
	StoreFile   = "cardflow.db"
	SocketFile  = "admin.sock"
	DemoKeyFile = "demo-key"
	DemoEnvFile = "demo.env"
)

// Config configures a local server.
type Config struct {
	// Addr is the HTTP listen address, e.g. ":3000".
	Addr string
	// DataDir holds the store file, the admin socket and the demo key.
	DataDir string
	// Out receives the start-up banner (the demo key, once).
	Out io.Writer
	Log *slog.Logger
}

// OpenService opens the store, creating the data directory, and returns the
// service over it. Close it with svc.Store().Close().
//
// The environment chooses the store: CARDFLOW_STORE is bbolt (the default,
// a file in the data directory) or dynamodb, which uses DYNAMODB_ENDPOINT
// (DynamoDB Local; unset means AWS as the environment configures it) and
// the tables named with CARDFLOW_TABLE_PREFIX (default cardflow-dev-).
func OpenService(dataDir string) (*app.Service, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	var store cardflow.Store
	var err error
	switch kind := os.Getenv("CARDFLOW_STORE"); kind {
	case "", "bbolt":
		store, err = boltstore.Open(filepath.Join(dataDir, StoreFile))
	case "dynamodb":
		store, err = openDynamoDB()
	default:
		err = fmt.Errorf("CARDFLOW_STORE=%s: want bbolt or dynamodb", kind)
	}
	if err != nil {
		return nil, err
	}
	svc, err := app.New(store)
	if err != nil {
		store.Close()
		return nil, err
	}
	return svc, nil
}

// openDynamoDB connects to DynamoDB. At a DynamoDB Local endpoint it first
// creates the tables that are missing, so a local run needs no setup step.
func openDynamoDB() (*dynamostore.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	endpoint := os.Getenv("DYNAMODB_ENDPOINT")
	prefix := os.Getenv("CARDFLOW_TABLE_PREFIX")
	if prefix == "" {
		prefix = dynamostore.DefaultPrefix
	}
	client, err := dynamostore.NewClient(ctx, endpoint, "")
	if err != nil {
		return nil, err
	}
	if endpoint != "" {
		if _, err := dynamostore.CreateTables(ctx, client, prefix); err != nil {
			return nil, fmt.Errorf("DynamoDB at %s (is DynamoDB Local running? `make dynamodb-local` starts one): %w", endpoint, err)
		}
	}
	return dynamostore.New(client, dynamostore.WithTablePrefix(prefix))
}

// Run serves until ctx is cancelled, then shuts down cleanly.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	svc, err := OpenService(cfg.DataDir)
	if err != nil {
		return err
	}
	defer svc.Store().Close()
	if err := seed(ctx, svc, cfg); err != nil {
		return fmt.Errorf("load demo data: %w", err)
	}
	api, err := httpapi.New(svc, httpapi.KeyAuthenticator{Service: svc}, httpapi.WithLogger(cfg.Log))
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	// The embedded store's file lock proves no other server uses this
	// directory, so a socket file left here is stale. (DynamoDB takes no
	// lock: run one server per data directory.)
	sockPath := filepath.Join(cfg.DataDir, SocketFile)
	os.Remove(sockPath)
	sock, err := net.Listen("unix", sockPath)
	if err != nil {
		ln.Close()
		return fmt.Errorf("admin socket: %w", err)
	}
	os.Chmod(sockPath, 0o600)

	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	admin := &http.Server{Handler: keyadmin.Handler(svc), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	go func() { errc <- admin.Serve(sock) }()
	cfg.Log.Info("cardflow listening", slog.String("addr", ln.Addr().String()), slog.String("data_dir", cfg.DataDir))

	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv.Shutdown(shutdownCtx)
	admin.Shutdown(shutdownCtx)
	os.Remove(sockPath)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	cfg.Log.Info("cardflow stopped")
	return err
}

// seed creates the demo tenant, its key and the sample data, once: a data
// directory that already has a demo key is left as it is.
func seed(ctx context.Context, svc *app.Service, cfg Config) error {
	keys, err := svc.ListKeys(ctx, DemoOrganization)
	if err != nil || len(keys) > 0 {
		return err
	}
	admin := &cardflow.Principal{OrganizationID: DemoOrganization, WorkspaceID: DemoWorkspace, Scopes: cardflow.AllScopes, Actor: "demo-admin"}
	ids, err := sample.Load(cardflow.NewContextWithPrincipal(ctx, admin), svc, time.Now())
	if err != nil {
		return err
	}
	key, _, err := svc.CreateKey(ctx, app.CreateKeyInput{OrganizationID: DemoOrganization, WorkspaceID: DemoWorkspace, Scopes: cardflow.AllScopes, Name: "demo-admin"})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.DataDir, DemoKeyFile), []byte(key+"\n"), 0o600); err != nil {
		return err
	}
	env := fmt.Sprintf("KEY=%s\nWORKFLOW_ID=%s\nSCHEDULED_WORKFLOW_ID=%s\nONBOARDING_WORKFLOW_ID=%s\nCARD_ID=%s\nEXECUTION_ID=%s\n",
		key, ids.ApprovalWorkflowID, ids.ScheduleWorkflowID, ids.OnboardingWorkflow, ids.ApprovalCardID, ids.ExecutionID)
	if err := os.WriteFile(filepath.Join(cfg.DataDir, DemoEnvFile), []byte(env), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "\nDemo organization %q created with sample workflows and cards.\nDemo API key (shown once, also in %s):\n\n    %s\n\n",
		DemoOrganization, filepath.Join(cfg.DataDir, DemoKeyFile), key)
	return nil
}
