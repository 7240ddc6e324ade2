package app_test

import (
	"testing"

	"github.com/cardflow/cardflow/internal/dynamostoretest"
	"github.com/cardflow/cardflow/pkg/cardflow"
)

// onEachStore runs test on each store: the embedded one and DynamoDB on
// DynamoDB Local (skipped without it), as internal/storetest's contract runs.
// open gives a store of the backend; a test on DynamoDB shares its tables
// with others, so it uses an organization of its own.
func onEachStore(t *testing.T, test func(t *testing.T, open func(testing.TB) cardflow.Store)) {
	for _, b := range []struct {
		name string
		open func(testing.TB) cardflow.Store
	}{
		{"bolt", func(tb testing.TB) cardflow.Store { return openStore(tb) }},
		{"dynamodb", func(tb testing.TB) cardflow.Store { return dynamostoretest.Open(tb) }},
	} {
		t.Run(b.name, func(t *testing.T) { test(t, b.open) })
	}
}
