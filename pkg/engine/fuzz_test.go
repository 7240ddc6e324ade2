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

// FuzzCheck validates fuzzed workflows and compiles the expressions and
// templates of their step configs and connections, as saveWorkflow does:
// Check answers nil or a VALIDATION_ERROR with a message, and never panics
// or hangs. The seeds are valid, so mutations reach the compiler.
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
	f.Add([]byte(`{"workflow_name":"w","workflow_steps":[{"id":"s","name":"S","type":"trigger","config":{"kind":"REQUEST"}},{"id":"t","name":"T","type":"transform","config":{"output":{"total":"{{ input.a + input.b }}"}}},{"id":"c","name":"C","type":"condition"},{"id":"e","name":"E","type":"end","config":{"output":"{{ steps.t.output }}"}}],"workflow_connections":[{"from":"s","to":"t"},{"from":"t","to":"c"},{"from":"c","to":"t","when":"steps.t.output.total > 3.0"},{"from":"c","to":"e"}]}`))
	f.Add([]byte(`{"workflow_name":"w","workflow_steps":[{"id":"s","name":"S","type":"trigger","config":{"kind":"REQUEST"}},{"id":"h","name":"H","type":"http","config":{"method":"POST","url":"https://x/{{ input.id }}","headers":{"A":"{{ '}}' }}"},"body":"{{ input }}"}},{"id":"d","name":"D","type":"delay","config":{"until":"timestamp(input.at)"}},{"id":"e","name":"E","type":"end"}],"workflow_connections":[{"from":"s","to":"h"},{"from":"h","to":"d"},{"from":"d","to":"e"}]}`))
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
