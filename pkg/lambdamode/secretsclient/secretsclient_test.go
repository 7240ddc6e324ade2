package secretsclient_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/secretsclient"
	"github.com/cardflow/cardflow/pkg/secrets"
)

// TestSecretsManagerClient reads a secret through a function's Secrets
// Manager client from a stand-in speaking the service's JSON
// protocol, and checks that the request is signed with the function's
// region and role, as Lambda provides them.
func TestSecretsManagerClient(t *testing.T) {
	var gotAuth, gotID string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		var in struct{ SecretId string }
		if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" || json.NewDecoder(r.Body).Decode(&in) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		gotID = in.SecretId
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		json.NewEncoder(w).Encode(map[string]string{"Name": in.SecretId, "SecretString": "sap-user:sap-pw"})
	}))
	defer srv.Close()
	t.Setenv(secrets.SourceEnv, "secretsmanager")
	t.Setenv(secrets.EndpointEnv, srv.URL)
	t.Setenv(secrets.PrefixEnv, "acme/")

	env := lambdamode.Env{Region: "eu-central-1", AccessKeyID: "ASIAROLE", SecretAccessKey: "role-secret", SessionToken: "role-token"}
	st, err := secrets.FromEnv(t.Context(), secretsclient.New(env))
	if err != nil {
		t.Fatal(err)
	}
	got, err := secrets.ForOrganization(st, "org-1").Secret(t.Context(), "sap-prod")
	if err != nil || got != "sap-user:sap-pw" {
		t.Fatalf("Secret: got %q, %v; want sap-user:sap-pw", got, err)
	}
	if want := "acme/org/org-1/sap-prod"; gotID != want {
		t.Errorf("got secret id %q, want %s", gotID, want)
	}
	if want := "Credential=ASIAROLE/"; !strings.Contains(gotAuth, want) || !strings.Contains(gotAuth, "/eu-central-1/secretsmanager/aws4_request") {
		t.Errorf("got Authorization %q, want the role's key and eu-central-1", gotAuth)
	}
}
