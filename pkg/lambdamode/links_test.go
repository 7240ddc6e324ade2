package lambdamode

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
	"github.com/cardflow/cardflow/pkg/httpapi"
)

// heavy are packages that make a function's bootstrap large; a function
// may link one only where linksHeavy allows it.
var heavy = []string{
	"github.com/cardflow/cardflow/pkg/cards",      // card validation, x/text tables
	"github.com/cardflow/cardflow/pkg/engine",     // the graph interpreter
	"github.com/cardflow/cardflow/pkg/steps",      // step kinds, outbound calls
	"github.com/cardflow/cardflow/pkg/expr",       // CEL
	"cel.dev/cel-go/cel",                          // with protobuf and ANTLR
	"github.com/aws/aws-sdk-go-v2/config",         // SSO, STS and sign-in clients
	"github.com/aws/aws-sdk-go-v2/service/sso",    // the same, reached otherwise
	"github.com/aws/aws-sdk-go-v2/service/sts",    // the same
	"github.com/aws/aws-sdk-go-v2/service/signin", // the same
	"text/template", // reflection keeps every method of every type
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager",
}

// secretsManager is the client of the functions that read secrets;
// textTemplate comes with cel-go, which imports it.
var secretsManager, textTemplate = heavy[len(heavy)-1], heavy[len(heavy)-2]

// withCEL are the heavy packages of the functions that compile or run
// expressions.
var withCEL = heavy[:5]

// linksHeavy says which heavy packages a function needs: saveCard checks
// cards and previewCard expands them; saveWorkflow validates and compiles with the step kinds of
// pkg/steps; advance runs steps; the Teams answers read their secrets, and
// teamsRespond expands the card its confirmation page shows. Every other function links none, and none
// links the SDK's configuration loader.
var linksHeavy = map[string][]string{
	"saveCard":      {"github.com/cardflow/cardflow/pkg/cards"},
	"previewCard":   {"github.com/cardflow/cardflow/pkg/cards"},
	"saveWorkflow":  append(slices.Clone(withCEL), textTemplate, secretsManager),
	"advance":       append(slices.Clone(withCEL), textTemplate, secretsManager),
	"teamsMessages": {secretsManager},
	"teamsRespond":  {secretsManager, "github.com/cardflow/cardflow/pkg/cards"},
}

// TestFunctionLinks lists each function's dependencies as `make build`
// builds it and fails when one links a heavy package it does not need, so
// that read endpoints and Park stay small.
func TestFunctionLinks(t *testing.T) {
	testenv.Command(t, "go")
	cmd := exec.Command("go", "list", "-tags", "lambda.norpc", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "./functions/...")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		fields := strings.Fields(line)
		name := fields[0][strings.LastIndex(fields[0], "/")+1:]
		seen++
		for _, dep := range fields[1:] {
			if slices.Contains(heavy, dep) && !slices.Contains(linksHeavy[name], dep) {
				t.Errorf("functions/%s links %s", name, dep)
			}
		}
	}
	if seen < len(httpapi.Endpoints())+1 {
		t.Errorf("go list found %d functions, want at least the %d endpoints and the authorizer", seen, len(httpapi.Endpoints()))
	}
}
