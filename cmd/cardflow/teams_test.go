package main

import (
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeTeams starts the command with a Teams signing secret from the
// environment: the response link endpoint answers, the bot endpoint does
// not exist without a bot, and a bot without its secrets is refused.
func TestServeTeams(t *testing.T) {
	bin := binary(t)
	t.Setenv("CARDFLOW_PUBLIC_URL", "https://cardflow.example.com")
	t.Setenv("CARDFLOW_TEAMS_SIGNING_SECRET", "teams-signing")
	t.Setenv("CARDFLOW_DEPLOYMENT_SECRET_TEAMS_SIGNING", "0123456789abcdef0123456789abcdef")
	srv := startServer(t, bin, filepath.Join(t.TempDir(), ".cardflow"), freePort(t))

	resp, err := http.Get(srv.base + "/v1/teams/respond?token=forged.token")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), "not valid") {
		t.Errorf("forged link: got %d %s %s, want a 400 page", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	resp, err = http.Post(srv.base+"/v1/teams/messages", "application/json", strings.NewReader(`{"type": "message"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Without a bot no Bot Framework token can be valid, as openapi.yaml says.
	if resp.StatusCode != 401 {
		t.Errorf("messaging endpoint without a bot: got %d, want 401", resp.StatusCode)
	}
	srv.stop(t)

	cmd := exec.Command(bin, "serve", "--data-dir", t.TempDir(), "--teams-app-id", "some-app", "--teams-signing-secret", "")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--teams-app-id needs --teams-app-secret and --teams-signing-secret") {
		t.Errorf("bot without secrets: got %v %s, want a refusal naming the flags", err, out)
	}

	// A tenant belongs to one organization.
	cmd = exec.Command(bin, "serve", "--data-dir", t.TempDir(), "--teams-tenants", "t1=acme,t1=globex")
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--teams-tenants (CARDFLOW_TEAMS_TENANTS): Teams tenants: tenant t1 is mapped to acme and to globex") {
		t.Errorf("a tenant mapped twice: got %v %s, want a refusal naming it", err, out)
	}
}
