package localrunner_test

import (
	"path/filepath"
	"testing"

	"github.com/cardflow/cardflow/pkg/boltstore"
	"github.com/cardflow/cardflow/pkg/localmode"
	"github.com/cardflow/cardflow/pkg/runnertest"
)

func TestContract(t *testing.T) {
	runnertest.Run(t, func(t *testing.T) runnertest.Harness {
		store, err := boltstore.Open(filepath.Join(t.TempDir(), "cardflow.db"))
		if err != nil {
			t.Fatal(err)
		}
		st, err := localmode.NewStack(store, store, localmode.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return runnertest.Harness{Service: st.Service, Store: store}
	})
}
