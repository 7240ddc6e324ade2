package secrets_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	ids     []string // the SecretIds asked for
	failure string   // an error type answered to every call
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
	f.ids = append(f.ids, in.SecretId)
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
		values: map[string]string{
			"cardflow/org/acme/sap-prod":           "sapuser:S3cr3t-pw",
			"cardflow/org/acme/team/teams-app":     `{"client_id":"a","client_secret":"b"}`,
			"cardflow/deployment/teams-signing":    "signing-key",
			"cardflow/org/acme/blank":              "",
			"cardflow/org/globex/sap-prod":         "globex-pw",
			"cardflow/org/acme/deployment/unknown": "acme's own",
		},
		binary: map[string][]byte{"cardflow/org/acme/cert": []byte("binary-value")},
	}
	sm := newSecretsManager(t, f)
	for _, tc := range []struct {
		key          secrets.Key
		want         string
		wantErr      string
		wantNotFound bool
	}{
		{secrets.OrganizationKey("acme", "sap-prod"), "sapuser:S3cr3t-pw", "", false},
		{secrets.OrganizationKey("acme", "team/teams-app"), `{"client_id":"a","client_secret":"b"}`, "", false},
		{secrets.OrganizationKey("acme", "cert"), "binary-value", "", false},
		{secrets.OrganizationKey("globex", "sap-prod"), "globex-pw", "", false},
		{secrets.DeploymentKey("teams-signing"), "signing-key", "", false},
		{secrets.OrganizationKey("acme", "deployment/unknown"), "acme's own", "", false},
		{secrets.OrganizationKey("acme", "missing"), "", "Secrets Manager has no secret cardflow/org/acme/missing", true},
		{secrets.OrganizationKey("acme", "blank"), "", "has no value", true},
		{secrets.OrganizationKey("acme", "../globex/sap-prod"), "", `"../globex/sap-prod" is not a secret name`, false},
		{secrets.OrganizationKey("acme/../globex", "sap-prod"), "", `"acme/../globex" is not an organization id`, false},
		{secrets.OrganizationKey("", "sap-prod"), "", `"" is not an organization id`, false},
	} {
		got, err := sm.Get(context.Background(), tc.key)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || errors.Is(err, secrets.ErrNotFound) != tc.wantNotFound {
				t.Errorf("Get(%s): got %q, %v; want error %q (not found: %v)", tc.key.Path(), got, err, tc.wantErr, tc.wantNotFound)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Get(%s): got %q, %v; want %q", tc.key.Path(), got, err, tc.want)
		}
	}
	// Keys that are not valid never reach the service.
	for _, id := range f.ids {
		if strings.Contains(id, "..") || !strings.HasPrefix(id, "cardflow/org/") && !strings.HasPrefix(id, "cardflow/deployment/") {
			t.Errorf("asked Secrets Manager for %q", id)
		}
	}
	f.failure = "AccessDeniedException"
	_, err := sm.Get(context.Background(), secrets.OrganizationKey("acme", "sap-prod"))
	if err == nil || !strings.Contains(err.Error(), "AccessDeniedException") || strings.Contains(err.Error(), "S3cr3t") || errors.Is(err, secrets.ErrNotFound) {
		t.Errorf("denied: got %v, want AccessDeniedException without the value", err)
	}
}

func TestCache(t *testing.T) {
	f := &fakeSecretsManager{values: map[string]string{"cardflow/org/acme/sap-prod": "v1", "cardflow/org/globex/sap-prod": "globex"}}
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	c := secrets.NewCache(newSecretsManager(t, f), time.Minute, func() time.Time { return now })
	read := func(k secrets.Key) string {
		t.Helper()
		v, err := c.Get(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	acme := secrets.OrganizationKey("acme", "sap-prod")
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
			f.values["cardflow/org/acme/sap-prod"] = step.rotate
			f.mu.Unlock()
		}
		if got := read(acme); got != step.want || f.gets != step.wantGets {
			t.Errorf("after %v: got %q with %d calls, want %q with %d", step.advance, got, f.gets, step.want, step.wantGets)
		}
	}
	// The same name of another organization is another entry.
	if got, want := read(secrets.OrganizationKey("globex", "sap-prod")), "globex"; got != want {
		t.Errorf("globex's sap-prod: got %q, want %q", got, want)
	}
	// A failure is not kept: the next read asks again.
	absent := secrets.OrganizationKey("acme", "absent")
	if _, err := c.Get(context.Background(), absent); err == nil {
		t.Fatal("got no error for an absent secret")
	}
	c.Get(context.Background(), absent)
	if got, want := f.gets, 5; got != want {
		t.Errorf("got %d calls, want %d", got, want)
	}
}

func TestEnvName(t *testing.T) {
	for _, tc := range []struct {
		key  secrets.Key
		want string
	}{
		{secrets.OrganizationKey("acme", "sap-prod"), "CARDFLOW_SECRET_ACME__SAP_PROD"},
		{secrets.OrganizationKey("org-1", "team/bot.token"), "CARDFLOW_SECRET_ORG_1__TEAM_BOT_TOKEN"},
		{secrets.OrganizationKey("demo-org", "approvals-hook"), "CARDFLOW_SECRET_DEMO_ORG__APPROVALS_HOOK"},
		// Ids of another shape are written in hexadecimal.
		{secrets.OrganizationKey("Acme", "sap-prod"), "CARDFLOW_SECRET__41636D65__SAP_PROD"},
		{secrets.OrganizationKey("org_1", "x"), "CARDFLOW_SECRET__6F72675F31__X"},
		{secrets.OrganizationKey("a--b", "x"), "CARDFLOW_SECRET__612D2D62__X"},
		{secrets.DeploymentKey("teams-signing"), "CARDFLOW_DEPLOYMENT_SECRET_TEAMS_SIGNING"},
	} {
		if got := secrets.EnvName(tc.key); got != tc.want {
			t.Errorf("EnvName(%s): got %s, want %s", tc.key.Path(), got, tc.want)
		}
	}
}

// TestEnvNamesKeepOrganizationsApart writes every organization id of up
// to three characters, and every name of up to three for the deployment and
// of up to two for an organization, from an alphabet of every kind of
// character (small and capital letters, digits, "-", "_", ".", "/", "@"),
// and checks that no variable is shared by two organizations, or by an
// organization and the deployment.
func TestEnvNamesKeepOrganizationsApart(t *testing.T) {
	alphabet := []string{"a", "b", "A", "0", "-", "_", ".", "/", "@"}
	words := map[int][]string{}
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			w := prefix + c
			for l := len(w); l <= 3; l++ {
				words[l] = append(words[l], w)
			}
			grow(w, n-1)
		}
	}
	grow("", 3)
	owner := map[string]string{}
	keys := 0
	claim := func(k secrets.Key, who string) {
		if k.Validate() != nil {
			return
		}
		keys++
		v := secrets.EnvName(k)
		if prev, ok := owner[v]; ok && prev != who {
			t.Fatalf("%s is the variable of %s and of %s", v, prev, who)
		}
		owner[v] = who
	}
	for _, name := range words[3] {
		claim(secrets.DeploymentKey(name), "the deployment")
	}
	for _, org := range words[3] {
		for _, name := range words[2] {
			claim(secrets.OrganizationKey(org, name), "organization "+org)
		}
	}
	if keys < 5000 {
		t.Fatalf("checked %d keys, want many more", keys)
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	for path, v := range map[string]string{
		"org/acme/sap-dev":            "fileuser:filepw\n",
		"org/acme/team/bot":           "token-1",
		"org/acme/empty":              "",
		"org/globex/sap-dev":          "globex-pw",
		"deployment/teams-signing":    "signing-key",
		"org/acme/deployment/unknown": "acme's own",
	} {
		file := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := secrets.Dir{Path: dir}
	for _, tc := range []struct {
		key          secrets.Key
		want         string
		wantNotFound bool
	}{
		{secrets.OrganizationKey("acme", "sap-dev"), "fileuser:filepw", false},
		{secrets.OrganizationKey("acme", "team/bot"), "token-1", false},
		{secrets.OrganizationKey("globex", "sap-dev"), "globex-pw", false},
		{secrets.DeploymentKey("teams-signing"), "signing-key", false},
		{secrets.OrganizationKey("acme", "deployment/unknown"), "acme's own", false},
		{secrets.OrganizationKey("acme", "empty"), "", true},
		{secrets.OrganizationKey("acme", "team"), "", true},               // a directory
		{secrets.OrganizationKey("acme", "sap-dev/x"), "", true},          // under a file
		{secrets.OrganizationKey("acme", "teams-signing"), "", true},      // the deployment's
		{secrets.OrganizationKey("Acme", "sap-dev"), "", true},            // another organization
		{secrets.OrganizationKey("acme", "../globex/sap-dev"), "", false}, // not a name
		{secrets.OrganizationKey("..", "deployment/teams-signing"), "", false},
		{secrets.DeploymentKey("../org/acme/sap-dev"), "", false},
	} {
		got, err := d.Get(context.Background(), tc.key)
		if tc.want != "" {
			if err != nil || got != tc.want {
				t.Errorf("Get(%s): got %q, %v; want %q", tc.key.Path(), got, err, tc.want)
			}
			continue
		}
		if err == nil || errors.Is(err, secrets.ErrNotFound) != tc.wantNotFound {
			t.Errorf("Get(%s): got %q, %v; want an error (not found: %v)", tc.key.Path(), got, err, tc.wantNotFound)
		}
	}
}

func TestFromEnv(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "org", "acme"), 0o700)
	os.WriteFile(filepath.Join(dir, "org", "acme", "sap-dev"), []byte("fileuser:filepw\n"), 0o600)

	f := &fakeSecretsManager{values: map[string]string{"acme/org/acme/sap-prod": "from-aws"}}
	srv := httptest.NewServer(f)
	defer srv.Close()

	for _, tc := range []struct {
		name    string
		env     map[string]string
		secret  string
		want    string
		wantErr string
	}{
		{"environment", map[string]string{"CARDFLOW_SECRET_ACME__SAP_PROD": "envuser:envpw"}, "sap-prod", "envuser:envpw", ""},
		{"environment first", map[string]string{"CARDFLOW_SECRETS_DIR": dir, "CARDFLOW_SECRET_ACME__SAP_DEV": "env-wins"}, "sap-dev", "env-wins", ""},
		{"file", map[string]string{"CARDFLOW_SECRETS_DIR": dir}, "sap-dev", "fileuser:filepw", ""},
		{"neither", map[string]string{"CARDFLOW_SECRETS_DIR": dir}, "nope", "", `secret "nope" is not available`},
		{"a variable without the organization is not read", map[string]string{"CARDFLOW_SECRET_SAP_PROD": "old"}, "sap-prod", "", `secret "sap-prod" is not available`},
		{"secrets manager", map[string]string{"CARDFLOW_SECRETS": "secretsmanager", "SECRETSMANAGER_ENDPOINT": srv.URL, "CARDFLOW_SECRETS_PREFIX": "acme/",
			"AWS_REGION": "eu-central-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}, "sap-prod", "from-aws", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			st, err := secrets.FromEnv(context.Background(), smclient.New)
			if err != nil {
				t.Fatal(err)
			}
			got, err := secrets.ForOrganization(st, "acme").Secret(context.Background(), tc.secret)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
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

// planted are the secrets of two organizations and of the deployment, by
// key path, that TestOrganizationsKeepToTheirOwn puts in every kind of
// store.
var planted = map[string]string{
	"org/org-a/sap-prod":       "value-of-org-a-sap",
	"org/org-b/sap-prod":       "value-of-org-b-sap",
	"org/org-b/b-only":         "value-of-org-b-only",
	"org/org-b/team/hook":      "value-of-org-b-hook",
	"deployment/teams-signing": "value-of-deployment-signing",
	"deployment/bot-secret":    "value-of-deployment-bot",
}

// attacks are names with which an organization tries to read what is not
// its own: another's secrets and the deployment's, by their plain names,
// by paths that climb out of its namespace, and by spellings of their
// environment variables.
var attacks = []string{
	"b-only", "team/hook", "teams-signing", "bot-secret", "missing",
	"../org-b/b-only", "../../deployment/teams-signing", "x/../../org-b/b-only", "./b-only",
	"org/org-b/b-only", "org-b/b-only", "deployment/teams-signing", "deployment/bot-secret",
	"ORG_B__B_ONLY", "B__B_ONLY", "CARDFLOW_DEPLOYMENT_SECRET_TEAMS_SIGNING", "_TEAMS_SIGNING",
	"org-b//b-only", "org-b/", "", ".", "..", "/deployment/teams-signing",
}

func TestOrganizationsKeepToTheirOwn(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{}
	sm := &fakeSecretsManager{values: map[string]string{}}
	for path, v := range planted {
		file := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
		sm.values["cardflow/"+path] = v
		ns, name, _ := strings.Cut(path, "/")
		k := secrets.DeploymentKey(name)
		if ns == "org" {
			org, name, _ := strings.Cut(name, "/")
			k = secrets.OrganizationKey(org, name)
		}
		env[secrets.EnvName(k)] = v
	}
	var mu sync.Mutex
	var looked []string
	stores := map[string]secrets.Store{
		"environment": secrets.Env{Lookup: func(name string) (string, bool) {
			mu.Lock()
			looked = append(looked, name)
			mu.Unlock()
			v, ok := env[name]
			return v, ok
		}},
		"files":           secrets.Dir{Path: dir},
		"Secrets Manager": secrets.NewCache(newSecretsManager(t, sm), time.Minute, nil),
	}
	ctx := context.Background()
	for kind, st := range stores {
		t.Run(kind, func(t *testing.T) {
			looked, sm.ids = nil, nil
			if got, err := secrets.ForOrganization(st, "org-a").Secret(ctx, "sap-prod"); err != nil || got != "value-of-org-a-sap" {
				t.Fatalf("org-a's own sap-prod: got %q, %v", got, err)
			}
			if got, err := secrets.ForDeployment(st).Secret(ctx, "teams-signing"); err != nil || got != "value-of-deployment-signing" {
				t.Fatalf("the deployment's teams-signing: got %q, %v", got, err)
			}
			// org-a; "org", whose id starts as org-b's does; and ids that
			// are not organization ids at all.
			for _, org := range []string{"org-a", "org", "org_b", "ORG-B", "", "..", "../deployment", "org-b/..", "org-b/"} {
				src := secrets.ForOrganization(st, org)
				for _, name := range attacks {
					got, err := src.Secret(ctx, name)
					want := fmt.Sprintf("secret %q is not available", name)
					if err == nil || err.Error() != want || !errors.Is(err, secrets.ErrNotFound) {
						t.Errorf("organization %q reading %q: got %q, %v; want the error %q", org, name, got, err, want)
					}
				}
			}
			// The deployment's names reach no organization's secrets either.
			for _, name := range []string{"org/org-b/b-only", "../org/org-b/b-only", "sap-prod"} {
				if got, err := secrets.ForDeployment(st).Secret(ctx, name); err == nil {
					t.Errorf("the deployment reading %q: got %q", name, got)
				}
			}
			for _, name := range looked {
				if !strings.HasPrefix(name, "CARDFLOW_SECRET_ORG_A__") && !strings.HasPrefix(name, "CARDFLOW_SECRET_ORG__") && !strings.HasPrefix(name, "CARDFLOW_SECRET__") && !strings.HasPrefix(name, "CARDFLOW_DEPLOYMENT_SECRET_") {
					t.Errorf("looked up the variable %s", name)
				}
				if strings.HasPrefix(name, "CARDFLOW_SECRET_ORG_B__") {
					t.Errorf("looked up org-b's variable %s", name)
				}
			}
			for _, id := range sm.ids {
				if strings.HasPrefix(id, "cardflow/org/org-b/") || strings.Contains(id, "..") {
					t.Errorf("asked Secrets Manager for %s", id)
				}
			}
		})
	}
}

// failingStore fails as an unreachable Secrets Manager does.
type failingStore struct{}

func (failingStore) Get(context.Context, secrets.Key) (string, error) {
	return "", errors.New("Secrets Manager secret cardflow/org/org-a/sap-prod: dial tcp: connection refused")
}

func TestStoreFailures(t *testing.T) {
	_, err := secrets.ForOrganization(failingStore{}, "org-a").Secret(context.Background(), "sap-prod")
	if got, want := fmt.Sprint(err), `secret "sap-prod" is not available right now`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if errors.Is(err, secrets.ErrNotFound) {
		t.Error("a store that failed reads as a missing secret, which is not retried")
	}
	_, err = secrets.ForDeployment(secrets.Env{Lookup: func(string) (string, bool) { return "", false }}).Secret(context.Background(), "teams-signing")
	if got, want := fmt.Sprint(err), `deployment secret "teams-signing" is not available`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
