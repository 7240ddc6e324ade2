// Package storetest is the contract suite of cardflow.Store. Every adapter
// runs it unchanged, so it checks only what the port's doc comments promise.
//
// The suite gives every subtest its own organizations, named with fresh ids,
// and never assumes a store is empty beyond them, so an adapter may hand out
// stores that share a backend.
package storetest

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// Run runs the contract suite. newStore returns the store one subtest uses;
// Run closes it when that subtest ends. Subtests run in parallel.
func Run(t *testing.T, newStore func(t *testing.T) cardflow.Store) {
	e := env{newStore: newStore}
	for _, s := range []struct {
		name string
		run  func(*testing.T, env)
	}{
		{"Workflows", workflows.run},
		{"Cards", cards.run},
		{"LatestActiveCard", testLatestActiveCard},
		{"Executions", testExecutions},
		{"ManySteps", testManySteps},
		{"Schemas", testSchemas},
		{"APIKeys", testAPIKeys},
		{"Isolation", testIsolation},
		{"LatestWorkflow", testLatestWorkflow},
		{"Engine", testEngine},
		{"Housekeeping", testHousekeeping},
		{"Unreadable", testUnreadable},
		{"Approvals", testApprovals},
		{"ApprovalStats", testApprovalStats},
		{"ApprovalsOverdue", testApprovalsOverdue},
		{"Events", testEvents},
		{"Limits", testLimits},
		{"Search", testSearch},
		{"Bulk", testBulk},
		{"Conversations", testConversations},
		{"Delegations", testDelegations},
	} {
		t.Run(s.name, func(t *testing.T) { s.run(t, e) })
	}
}

type env struct {
	newStore func(t *testing.T) cardflow.Store
}

// store returns a store for t and marks t parallel.
func (e env) store(t *testing.T) cardflow.Store {
	t.Helper()
	t.Parallel()
	s := e.newStore(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// newOrg returns an organization id no other test uses.
func newOrg() string { return "org-" + cardflow.NewID(time.Now()) }

// newID returns a fresh id for records whose ids the caller chooses.
func newID() string { return cardflow.NewID(time.Now()) }

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if got := cardflow.ErrorCode(err); got != code {
		t.Errorf("%s: got error %v (code %q), want code %q", what, err, got, code)
	}
}

func mustOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// sameJSON compares records by their JSON, which is what the service returns
// and what survives any adapter's round trip (numbers in maps come back as
// float64, for one).
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, err := json.Marshal(got)
	mustOK(t, what, err)
	w, err := json.Marshal(want)
	mustOK(t, what, err)
	if string(g) != string(w) {
		t.Errorf("%s:\ngot  %s\nwant %s", what, g, w)
	}
}

// keyFields checks that a page key carries exactly the fields openapi.yaml gives them.
func keyFields(t *testing.T, key any, want ...string) {
	t.Helper()
	b, err := json.Marshal(key)
	mustOK(t, "marshal page key", err)
	var m map[string]any
	mustOK(t, "unmarshal page key", json.Unmarshal(b, &m))
	if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("page key fields: got %v, want %v", got, want)
	}
}

// walk reads every page of a list at the given limit and checks the paging
// rules: every page but the final one is full and its LastKey is the key of
// its last item; the final page has no LastKey and is empty only when the
// whole list is. It returns the items of all pages in order.
func walk[T, K any](t *testing.T, total, limit int, list func(cardflow.ListOptions[K]) (cardflow.Page[T, K], error), keyOf func(T) K) []T {
	t.Helper()
	var all []T
	var after *K
	for page := 1; ; page++ {
		p, err := list(cardflow.ListOptions[K]{Limit: limit, After: after})
		mustOK(t, "list page", err)
		all = append(all, p.Items...)
		if p.LastKey == nil {
			if len(p.Items) == 0 && page > 1 {
				t.Errorf("page %d: got an empty trailing page, want LastKey unset on page %d", page, page-1)
			}
			return all
		}
		if len(p.Items) != limit {
			t.Fatalf("page %d: got %d items with LastKey set, want %d", page, len(p.Items), limit)
		}
		if len(all) >= total {
			t.Fatalf("page %d: got LastKey set after all %d items", page, total)
		}
		if want := keyOf(p.Items[len(p.Items)-1]); !reflect.DeepEqual(*p.LastKey, want) {
			t.Errorf("page %d: got LastKey %+v, want the last item's key %+v", page, *p.LastKey, want)
		}
		after = p.LastKey
	}
}

// pagings are the list sizes and limits every list is walked with.
var pagings = []struct {
	name         string
	total, limit int
}{
	{"empty", 0, 5},
	{"short page", 4, 5},
	{"exactly limit", 5, 5},
	{"limit plus one", 6, 5},
	{"uneven pages", 23, 7},
	{"30 pages", 90, 3},
}
