package engine_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
)

// FuzzCheck compiles the expressions and templates of fuzzed step configs
// and connections, as saveWorkflow does: Check answers nil or a
// VALIDATION_ERROR with a message, and never panics or hangs.
func FuzzCheck(f *testing.F) {
	store, err := boltstore.Open(filepath.Join(f.TempDir(), "cardflow.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { store.Close() })
	env, err := expr.NewEnv()
	if err != nil {
		f.Fatal(err)
	}
	eng, err := engine.New(store, store, env)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(`{"workflow_steps":[{"id":"t","type":"transform","config":{"output":{"total":"{{ input.a + input.b }}"}}},{"id":"c","type":"condition"}],"workflow_connections":[{"from":"c","to":"t","when":"steps.t.output.total > 3.0"}]}`))
	f.Add([]byte(`{"workflow_steps":[{"id":"h","type":"http","config":{"method":"POST","url":"https://x/{{ input.id }}","headers":{"A":"{{ '}}' }}"},"body":"{{ input }}"}},{"id":"d","type":"delay","config":{"until":"timestamp(input.at)"}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var w cardflow.Workflow
		if json.Unmarshal(body, &w) != nil {
			return
		}
		err := eng.Check(&w)
		if err == nil {
			return
		}
		if got, want := cardflow.ErrorCode(err), cardflow.EINVALID; got != want {
			t.Fatalf("got code %s (%v), want %s", got, err, want)
		}
		if cardflow.ErrorMessage(err) == "" {
			t.Fatal("got an error without a message")
		}
	})
}
