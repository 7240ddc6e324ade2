package secrets_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/cardflow/cardflow/pkg/secrets"
	"github.com/cardflow/cardflow/pkg/secrets/smclient"
)

// fakeSecretsManager speaks Secrets Manager's AWS JSON 1.1 protocol for
// GetSecretValue, and refuses requests that are not signed or not shaped as
// the real service expects.
type fakeSecretsManager struct {
	mu      sync.Mutex
	values  map[string]string
	binary  map[string][]byte
	gets    int
	failure string // an error type answered to every call
}

func (f *fakeSecretsManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fail := func(status int, typ, msg string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"__type": typ, "Message": msg})
	}
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/":
		fail(404, "UnknownOperationException", "not found")
		return
	case r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue":
		fail(400, "UnknownOperationException", "unknown target "+r.Header.Get("X-Amz-Target"))
		return
	case r.Header.Get("Content-Type") != "application/x-amz-json-1.1":
		fail(400, "SerializationException", "bad content type")
		return
	case !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=test/"):
		fail(400, "IncompleteSignature", "the request is not signed")
		return
	}
	var in struct{ SecretId, VersionStage string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.SecretId == "" {
		fail(400, "InvalidParameterException", "SecretId is required")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gets++
	if f.failure != "" {
		fail(400, f.failure, "User: arn:aws:sts::123456789012:assumed-role/cardflow is not authorized to perform: secretsmanager:GetSecretValue")
		return
	}
	out := map[string]any{
		"ARN": "arn:aws:secretsmanager:eu-central-1:123456789012:secret:" + in.SecretId + "-AbCdEf", "Name": in.SecretId,
		"VersionId": "6d2c6d43-0b37-4e4a-9b4f-1f0e4e2b9b0a", "VersionStages": []string{"AWSCURRENT"}, "CreatedDate": 1.7624e9,
	}
	if v, ok := f.values[in.SecretId]; ok {
		out["SecretString"] = v
	} else if b, ok := f.binary[in.SecretId]; ok {
		out["SecretBinary"] = b // base64 in JSON, as the service sends it
	} else {
		fail(400, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	json.NewEncoder(w).Encode(out)
}

func newSecretsManager(t *testing.T, f *fakeSecretsManager) *secrets.SecretsManager {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	client := secretsmanager.New(secretsmanager.Options{
		Region: "eu-central-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	sm, err := secrets.NewSecretsManager(client, "cardflow/")
	if err != nil {
		t.Fatal(err)
	}
	return sm
}

func TestSecretsManager(t *testing.T) {
	f := &fakeSecretsManager{
		values: map[string]string{"cardflow/sap-prod": "sapuser:S3cr3t-pw", "cardflow/team/teams-app": `{"client_id":"a","client_secret":"b"}`},
		binary: map[string][]byte{"cardflow/cert": []byte("binary-value")},
	}
	sm := newSecretsManager(t, f)
	for _, tc := range []struct {
		name, want, wantErr string
	}{
		{"sap-prod", "sapuser:S3cr3t-pw", ""},
		{"team/teams-app", `{"client_id":"a","client_secret":"b"}`, ""},
		{"cert", "binary-value", ""},
		{"missing", "", `secret "missing": Secrets Manager has no secret cardflow/missing`},
		{"../x", "", `"../x" is not a secret name`},
	} {
		got, err := sm.Secret(context.Background(), tc.name)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Secret(%q): got %q, %v; want error %q", tc.name, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Secret(%q): got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	if _, err := sm.Secret(context.Background(), "missing"); !errors.Is(err, secrets.ErrNotFound) {
		t.Errorf("missing secret: got %v, want ErrNotFound", err)
	}
	f.failure = "AccessDeniedException"
	_, err := sm.Secret(context.Background(), "sap-prod")
	if err == nil || !strings.Contains(err.Error(), "AccessDeniedException") || strings.Contains(err.Error(), "S3cr3t") {
		t.Errorf("denied: got %v, want AccessDeniedException without the value", err)
	}
}

func TestCache(t *testing.T) {
	f := &fakeSecretsManager{values: map[string]string{"cardflow/sap-prod": "v1"}}
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	c := secrets.NewCache(newSecretsManager(t, f), time.Minute, func() time.Time { return now })
	read := func() string {
		t.Helper()
		v, err := c.Secret(context.Background(), "sap-prod")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, step := range []struct {
		advance  time.Duration
		rotate   string
		want     string
		wantGets int
	}{
		{0, "", "v1", 1},
		{30 * time.Second, "v2", "v1", 1}, // rotated, still cached
		{31 * time.Second, "", "v2", 2},   // TTL passed
		{0, "", "v2", 2},
	} {
		now = now.Add(step.advance)
		if step.rotate != "" {
			f.mu.Lock()
			f.values["cardflow/sap-prod"] = step.rotate
			f.mu.Unlock()
		}
		if got := read(); got != step.want || f.gets != step.wantGets {
			t.Errorf("after %v: got %q with %d calls, want %q with %d", step.advance, got, f.gets, step.want, step.wantGets)
		}
	}
	// A failure is not kept: the next read asks again.
	if _, err := c.Secret(context.Background(), "absent"); err == nil {
		t.Fatal("got no error for an absent secret")
	}
	c.Secret(context.Background(), "absent")
	if got, want := f.gets, 4; got != want {
		t.Errorf("got %d calls, want %d", got, want)
	}
}

func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "sap-dev"), []byte("fileuser:filepw\n"), 0o600)
	os.MkdirAll(filepath.Join(dir, "team"), 0o700)
	os.WriteFile(filepath.Join(dir, "team", "bot"), []byte("token-1"), 0o600)
	os.WriteFile(filepath.Join(dir, "empty"), nil, 0o600)

	f := &fakeSecretsManager{values: map[string]string{"acme/sap-prod": "from-aws"}}
	srv := httptest.NewServer(f)
	defer srv.Close()

	for _, tc := range []struct {
		name    string
		env     map[string]string
		secret  string
		want    string
		wantErr string
	}{
		{"environment", map[string]string{"CARDFLOW_SECRET_SAP_PROD": "envuser:envpw"}, "sap-prod", "envuser:envpw", ""},
		{"environment first", map[string]string{"CARDFLOW_SECRETS_DIR": dir, "CARDFLOW_SECRET_SAP_DEV": "env-wins"}, "sap-dev", "env-wins", ""},
		{"file", map[string]string{"CARDFLOW_SECRETS_DIR": dir}, "sap-dev", "fileuser:filepw", ""},
		{"file in a subdirectory", map[string]string{"CARDFLOW_SECRETS_DIR": dir}, "team/bot", "token-1", ""},
		{"empty file", map[string]string{"CARDFLOW_SECRETS_DIR": dir}, "empty", "", "is empty"},
		{"neither", map[string]string{"CARDFLOW_SECRETS_DIR": dir}, "nope", "", "CARDFLOW_SECRET_NOPE"},
		{"no traversal", map[string]string{"CARDFLOW_SECRETS_DIR": dir}, "team/../sap-dev", "", "not a secret name"},
		{"secrets manager", map[string]string{"CARDFLOW_SECRETS": "secretsmanager", "SECRETSMANAGER_ENDPOINT": srv.URL, "CARDFLOW_SECRETS_PREFIX": "acme/",
			"AWS_REGION": "eu-central-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}, "sap-prod", "from-aws", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			src, err := secrets.FromEnv(context.Background(), smclient.New)
			if err != nil {
				t.Fatal(err)
			}
			got, err := src.Secret(context.Background(), tc.secret)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("got %q, %v; want error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	for _, env := range []map[string]string{{"CARDFLOW_SECRETS": "vault"}, {"CARDFLOW_SECRETS_DIR": filepath.Join(dir, "none")}} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		if _, err := secrets.FromEnv(context.Background(), smclient.New); err == nil {
			t.Errorf("FromEnv with %v: got no error", env)
		}
		for k := range env {
			os.Unsetenv(k)
		}
	}
}
