package storetest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// kind adapts the suite to a record kind that is saved in versions and
// published, so workflows and cards run the same tests.
type kind[T, K any] struct {
	noun string
	// sep joins status and version in status_version.
	sep string
	// record returns a record with content; id "" asks for a new one.
	record    func(org, id string) *T
	fields    func(*T) fields
	save      func(cardflow.Store, context.Context, *T) error
	get       func(cardflow.Store, context.Context, string, string, int) (*T, error)
	list      func(cardflow.Store, context.Context, string, cardflow.ListOptions[K]) (cardflow.Page[*T, K], error)
	publish   func(cardflow.Store, context.Context, string, string, int, string, int64) (*T, error)
	key       func(org, id string, version int) K
	keyFields []string
}

// fields are what the suite checks of a workflow or card.
type fields struct {
	org, id       string
	version       int
	status        string
	statusVersion string
	latest        bool
	modifiedBy    string
	modifiedOn    int64
}

var workflows = kind[cardflow.Workflow, cardflow.WorkflowKey]{
	noun: "workflow",
	sep:  "_",
	record: func(org, id string) *cardflow.Workflow {
		return &cardflow.Workflow{
			OrganizationID:       org,
			WorkspaceID:          "ws-1",
			WorkflowID:           id,
			WorkflowName:         "purchase approval",
			WorkflowIntegrations: map[string]any{"sap": map[string]any{"system": "PRD", "client": 100}},
			WorkflowSteps: []cardflow.Step{
				{ID: "lookup", Name: "Look up order", Type: "erp", Config: map[string]any{"entity": "PurchaseOrder"}},
				{ID: "approve", Name: "Ask approver", Type: "card", Config: map[string]any{"timeout": "48h"}},
			},
			WorkflowConnections: []cardflow.Connection{{From: "lookup", To: "approve"}, {From: "approve", To: "end", On: "timeout"}},
			WorkflowSchema:      map[string]any{"type": "object", "required": []any{"order_id"}},
			CreatedBy:           "alice",
			CreatedOn:           1700000000000,
			ModifiedOn:          1700000000000,
		}
	},
	fields: func(w *cardflow.Workflow) fields {
		f := fields{
			org: w.OrganizationID, id: w.WorkflowID, version: w.WorkflowVersion,
			status: w.WorkflowStatus, statusVersion: w.WorkflowStatusVersion, latest: bool(w.Latest),
			modifiedOn: w.ModifiedOn,
		}
		if w.ModifiedBy != nil {
			f.modifiedBy = *w.ModifiedBy
		}
		return f
	},
	save:    cardflow.Store.SaveWorkflowVersion,
	get:     cardflow.Store.GetWorkflow,
	list:    cardflow.Store.ListWorkflows,
	publish: cardflow.Store.PublishWorkflow,
	key: func(org, id string, version int) cardflow.WorkflowKey {
		return cardflow.WorkflowKey{OrganizationID: org, WorkflowID: id, WorkflowVersion: version}
	},
	keyFields: []string{"organization_id", "workflow_id", "workflow_version"},
}

var cards = kind[cardflow.Card, cardflow.CardKey]{
	noun: "card",
	sep:  "-",
	record: func(org, id string) *cardflow.Card {
		return &cardflow.Card{
			CardID:   id,
			CardName: "approval request",
			CardPayload: map[string]any{
				"type":    "AdaptiveCard",
				"version": "1.5",
				"body":    []any{map[string]any{"type": "TextBlock", "text": "Approve order ${order_id}?", "size": 2}},
			},
			WorkflowID:      "wf-1",
			WorkflowVersion: 1,
			OrganizationID:  org,
			WorkspaceID:     "ws-1",
			CreatedBy:       "alice",
			CreatedOn:       1700000000000,
			ModifiedOn:      1700000000000,
		}
	},
	fields: func(c *cardflow.Card) fields {
		return fields{
			org: c.OrganizationID, id: c.CardID, version: c.CardVersion,
			status: c.Status, statusVersion: c.StatusVersion, latest: bool(c.Latest),
			modifiedBy: c.ModifiedBy, modifiedOn: c.ModifiedOn,
		}
	},
	save:    cardflow.Store.SaveCardVersion,
	get:     cardflow.Store.GetCard,
	list:    cardflow.Store.ListCards,
	publish: cardflow.Store.PublishCard,
	key: func(org, id string, version int) cardflow.CardKey {
		return cardflow.CardKey{OrganizationID: org, CardID: id, CardVersion: version}
	},
	keyFields: []string{"organization_id", "card_id", "card_version"},
}

func (k *kind[T, K]) run(t *testing.T, e env) {
	for _, tc := range []struct {
		name string
		run  func(*testing.T, env)
	}{
		{"SaveNew", k.testSaveNew},
		{"SaveVersions", k.testSaveVersions},
		{"NotFound", k.testNotFound},
		{"Publish", k.testPublish},
		{"List", k.testList},
		{"ListForeignAfter", k.testListForeignAfter},
		{"ConcurrentSaves", k.testConcurrentSaves},
		{"ConcurrentPublishes", k.testConcurrentPublishes},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, e) })
	}
}

func (k *kind[T, K]) statusVersion(status string, version int) string {
	return status + k.sep + strconv.Itoa(version)
}

// create saves a new record with the given number of versions and returns
// its id.
func (k *kind[T, K]) create(t *testing.T, s cardflow.Store, org string, versions int) string {
	t.Helper()
	rec := k.record(org, "")
	mustOK(t, "save new "+k.noun, k.save(s, t.Context(), rec))
	id := k.fields(rec).id
	for range versions - 1 {
		mustOK(t, "save "+k.noun+" version", k.save(s, t.Context(), k.record(org, id)))
	}
	return id
}

func (k *kind[T, K]) mustGet(t *testing.T, s cardflow.Store, org, id string, version int) *T {
	t.Helper()
	rec, err := k.get(s, t.Context(), org, id, version)
	mustOK(t, fmt.Sprintf("get %s %s version %d", k.noun, id, version), err)
	return rec
}

// latestVersions returns the versions 1..n of id that are marked latest.
func (k *kind[T, K]) latestVersions(t *testing.T, s cardflow.Store, org, id string, n int) []int {
	t.Helper()
	var latest []int
	for v := 1; v <= n; v++ {
		if k.fields(k.mustGet(t, s, org, id, v)).latest {
			latest = append(latest, v)
		}
	}
	return latest
}

func (k *kind[T, K]) testSaveNew(t *testing.T, e env) {
	s := e.store(t)
	org := newOrg()
	rec := k.record(org, "")
	mustOK(t, "save", k.save(s, t.Context(), rec))

	got := k.fields(rec)
	if got.id == "" {
		t.Fatalf("got empty %s id after save, want one assigned", k.noun)
	}
	want := fields{
		org: org, id: got.id, version: 1, status: cardflow.StatusDraft,
		statusVersion: k.statusVersion(cardflow.StatusDraft, 1), latest: true,
		modifiedBy: got.modifiedBy, modifiedOn: got.modifiedOn,
	}
	if got != want {
		t.Errorf("saved %s: got %+v, want %+v", k.noun, got, want)
	}
	sameJSON(t, "get after save", k.mustGet(t, s, org, got.id, 1), rec)

	other := k.record(org, "")
	mustOK(t, "save second", k.save(s, t.Context(), other))
	if id := k.fields(other).id; id == got.id {
		t.Errorf("second new %s: got id %s again, want a new id", k.noun, id)
	}
}

func (k *kind[T, K]) testSaveVersions(t *testing.T, e env) {
	s := e.store(t)
	org := newOrg()
	id := k.create(t, s, org, 1)
	for v := 2; v <= 4; v++ {
		rec := k.record(org, id)
		mustOK(t, "save version", k.save(s, t.Context(), rec))
		got := k.fields(rec)
		want := fields{
			org: org, id: id, version: v, status: cardflow.StatusDraft,
			statusVersion: k.statusVersion(cardflow.StatusDraft, v), latest: false,
			modifiedBy: got.modifiedBy, modifiedOn: got.modifiedOn,
		}
		if got != want {
			t.Errorf("version %d: got %+v, want %+v", v, got, want)
		}
		sameJSON(t, fmt.Sprintf("get version %d", v), k.mustGet(t, s, org, id, v), rec)
	}
	// Version 1 stays latest until a version is published.
	if got := k.latestVersions(t, s, org, id, 4); !slices.Equal(got, []int{1}) {
		t.Errorf("latest versions: got %v, want [1]", got)
	}
}

func (k *kind[T, K]) testNotFound(t *testing.T, e env) {
	s := e.store(t)
	org := newOrg()
	id := k.create(t, s, org, 2)
	unknown := newID()
	for _, tc := range []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"get unknown id", func(ctx context.Context) error { _, err := k.get(s, ctx, org, unknown, 1); return err }},
		{"get unknown version", func(ctx context.Context) error { _, err := k.get(s, ctx, org, id, 3); return err }},
		{"get version 0", func(ctx context.Context) error { _, err := k.get(s, ctx, org, id, 0); return err }},
		{"save onto unknown id", func(ctx context.Context) error { return k.save(s, ctx, k.record(org, unknown)) }},
		{"publish unknown id", func(ctx context.Context) error { _, err := k.publish(s, ctx, org, unknown, 1, "bob", 1); return err }},
		{"publish unknown version", func(ctx context.Context) error { _, err := k.publish(s, ctx, org, id, 3, "bob", 1); return err }},
	} {
		wantCode(t, tc.name, tc.call(t.Context()), cardflow.ENOTFOUND)
	}
	// Nothing above may have changed the record.
	for v := 1; v <= 2; v++ {
		if got := k.fields(k.mustGet(t, s, org, id, v)); got.status != cardflow.StatusDraft || got.latest != (v == 1) {
			t.Errorf("version %d after failed calls: got status %s latest %v, want DRAFT latest %v", v, got.status, got.latest, v == 1)
		}
	}
	wantCode(t, "version 3 after failed saves", func() error { _, err := k.get(s, t.Context(), org, id, 3); return err }(), cardflow.ENOTFOUND)
}

func (k *kind[T, K]) testPublish(t *testing.T, e env) {
	s := e.store(t)
	org := newOrg()
	id := k.create(t, s, org, 3)
	versions := 3
	for i, step := range []struct {
		publish int // 0 saves a new version instead
		latest  int
	}{
		{publish: 2, latest: 2},
		{publish: 0, latest: 2}, // a new draft leaves latest on the version in force
		{publish: 3, latest: 3},
		{publish: 2, latest: 2}, // republishing an older version moves latest back
		{publish: 1, latest: 1}, // publishing an older draft too
	} {
		if step.publish == 0 {
			rec := k.record(org, id)
			mustOK(t, "save", k.save(s, t.Context(), rec))
			versions++
			if f := k.fields(rec); f.latest || f.version != versions {
				t.Errorf("step %d: saved version %d latest %v, want version %d latest false", i, f.version, f.latest, versions)
			}
		} else {
			by, now := fmt.Sprintf("publisher-%d", i), int64(1800000000000+i)
			rec, err := k.publish(s, t.Context(), org, id, step.publish, by, now)
			mustOK(t, "publish", err)
			got := k.fields(rec)
			want := fields{
				org: org, id: id, version: step.publish, status: cardflow.StatusActive,
				statusVersion: k.statusVersion(cardflow.StatusActive, step.publish), latest: true,
				modifiedBy: by, modifiedOn: now,
			}
			if got != want {
				t.Errorf("step %d: published %+v, want %+v", i, got, want)
			}
			sameJSON(t, fmt.Sprintf("step %d: get published version", i), k.mustGet(t, s, org, id, step.publish), rec)
		}
		if got := k.latestVersions(t, s, org, id, versions); !slices.Equal(got, []int{step.latest}) {
			t.Errorf("step %d: latest versions: got %v, want [%d]", i, got, step.latest)
		}
	}
	// Publishing never demotes: every version published above stays ACTIVE,
	// the draft saved in between stays DRAFT.
	for v, want := range map[int]string{1: cardflow.StatusActive, 2: cardflow.StatusActive, 3: cardflow.StatusActive, 4: cardflow.StatusDraft} {
		got := k.fields(k.mustGet(t, s, org, id, v))
		if got.status != want || got.statusVersion != k.statusVersion(want, v) {
			t.Errorf("version %d: got %s %s, want %s %s", v, got.status, got.statusVersion, want, k.statusVersion(want, v))
		}
	}
}

// ref names one version of a record.
type ref struct {
	id      string
	version int
}

// createMany creates ids records of versions versions each and returns their
// versions in list order (listOrder).
func (k *kind[T, K]) createMany(t *testing.T, s cardflow.Store, org string, ids, versions int) []ref {
	t.Helper()
	var want []ref
	for range ids {
		id := k.create(t, s, org, versions)
		for v := 1; v <= versions; v++ {
			want = append(want, ref{id, v})
		}
	}
	listOrder(want)
	return want
}

// listOrder sorts refs as lists return them: highest id first, which is
// newest first to the millisecond (ids of one millisecond are in no
// particular order), then highest version first.
func listOrder(refs []ref) {
	slices.SortFunc(refs, func(a, b ref) int { return compareRefs(b, a) })
}

func (k *kind[T, K]) refs(items []*T) []ref {
	got := make([]ref, len(items))
	for i, it := range items {
		f := k.fields(it)
		got[i] = ref{f.id, f.version}
	}
	return got
}

func (k *kind[T, K]) testList(t *testing.T, e env) {
	for _, tc := range pagings {
		t.Run(tc.name, func(t *testing.T) {
			s := e.store(t)
			org := newOrg()
			// Records of two versions each, one of one version for odd totals.
			want := k.createMany(t, s, org, tc.total/2, 2)
			if tc.total%2 == 1 {
				want = append(k.createMany(t, s, org, 1, 1), want...)
				listOrder(want)
			}
			// A record of another organization must not show.
			k.create(t, s, newOrg(), 1)

			list := func(opt cardflow.ListOptions[K]) (cardflow.Page[*T, K], error) {
				return k.list(s, t.Context(), org, opt)
			}
			keyOf := func(rec *T) K { f := k.fields(rec); return k.key(f.org, f.id, f.version) }
			got := k.refs(walk(t, tc.total, tc.limit, list, keyOf))
			if !slices.Equal(got, want) {
				t.Errorf("listed versions:\ngot  %v\nwant %v", got, want)
			}
			if !slices.IsSortedFunc(got, func(a, b ref) int { return compareRefs(b, a) }) {
				t.Errorf("listed versions are not ordered by id then version, both descending: %v", got)
			}

			first, err := list(cardflow.ListOptions[K]{Limit: tc.limit})
			mustOK(t, "list", err)
			if first.LastKey != nil {
				keyFields(t, *first.LastKey, k.keyFields...)
			}
		})
	}
}

func compareRefs(a, b ref) int {
	return cmp.Or(strings.Compare(a.id, b.id), cmp.Compare(a.version, b.version))
}

// testListForeignAfter passes page keys that point into another
// organization: the list must still show only the caller's records.
func (k *kind[T, K]) testListForeignAfter(t *testing.T, e env) {
	s := e.store(t)
	org, foreign := newOrg(), newOrg()
	k.createMany(t, s, org, 2, 2)
	theirs := k.createMany(t, s, foreign, 2, 2)
	for _, tc := range []struct {
		name  string
		after K
	}{
		{"foreign organization", k.key(foreign, theirs[0].id, theirs[0].version)},
		{"foreign record", k.key(org, theirs[len(theirs)-1].id, theirs[len(theirs)-1].version)},
	} {
		page, err := k.list(s, t.Context(), org, cardflow.ListOptions[K]{Limit: 10, After: &tc.after})
		mustOK(t, tc.name, err)
		for _, rec := range page.Items {
			if f := k.fields(rec); f.org != org {
				t.Errorf("%s: got %s %s of organization %s, want only %s", tc.name, k.noun, f.id, f.org, org)
			}
		}
	}
}

func (k *kind[T, K]) testConcurrentSaves(t *testing.T, e env) {
	s := e.store(t)
	org := newOrg()
	id := k.create(t, s, org, 1)
	const writers = 20
	got := make([]int, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			rec := k.record(org, id)
			if err := k.save(s, t.Context(), rec); err != nil {
				t.Errorf("writer %d: %v", i, err)
				return
			}
			got[i] = k.fields(rec).version
		})
	}
	wg.Wait()
	slices.Sort(got)
	want := make([]int, writers)
	for i := range want {
		want[i] = i + 2
	}
	if !slices.Equal(got, want) {
		t.Errorf("versions assigned to concurrent saves: got %v, want %v", got, want)
	}
	page, err := k.list(s, t.Context(), org, cardflow.ListOptions[K]{Limit: cardflow.MaxLimit})
	mustOK(t, "list", err)
	if n := len(page.Items); n != writers+1 || page.LastKey != nil {
		t.Errorf("listed %d versions (LastKey %v), want %d", n, page.LastKey != nil, writers+1)
	}
	if got := k.latestVersions(t, s, org, id, writers+1); !slices.Equal(got, []int{1}) {
		t.Errorf("latest versions: got %v, want [1]", got)
	}
}

func (k *kind[T, K]) testConcurrentPublishes(t *testing.T, e env) {
	s := e.store(t)
	org := newOrg()
	const versions = 10
	id := k.create(t, s, org, versions)
	var wg sync.WaitGroup
	for v := 1; v <= versions; v++ {
		wg.Go(func() {
			if _, err := k.publish(s, t.Context(), org, id, v, "bob", int64(v)); err != nil {
				t.Errorf("publish version %d: %v", v, err)
			}
		})
	}
	wg.Wait()
	if got := k.latestVersions(t, s, org, id, versions); len(got) != 1 {
		t.Errorf("latest versions after concurrent publishes: got %v, want exactly one", got)
	}
	for v := 1; v <= versions; v++ {
		if got := k.fields(k.mustGet(t, s, org, id, v)).status; got != cardflow.StatusActive {
			t.Errorf("version %d: got status %s, want %s", v, got, cardflow.StatusActive)
		}
	}
}

func testLatestActiveCard(t *testing.T, e env) {
	s := e.store(t)
	org := newOrg()
	id := cards.create(t, s, org, 1)
	latestActive := func(org, id string) (int, error) {
		c, err := s.GetLatestActiveCard(t.Context(), org, id)
		if err != nil {
			return 0, err
		}
		if c.Status != cardflow.StatusActive || c.CardID != id {
			t.Errorf("latest active card: got %s %s, want %s ACTIVE", c.CardID, c.StatusVersion, id)
		}
		return c.CardVersion, nil
	}
	_, err := latestActive(org, id)
	wantCode(t, "only a draft", err, cardflow.ENOTFOUND)

	for i, step := range []struct {
		publish, save int // a version to publish, then how many drafts to add
		want          int
	}{
		{publish: 1, want: 1},
		{save: 2, want: 1}, // drafts above do not count
		{publish: 3, want: 3},
		{publish: 2, want: 2}, // a rollback: the version published last
		{save: 1, want: 2},
		{publish: 4, want: 4},
	} {
		if step.publish > 0 {
			_, err := s.PublishCard(t.Context(), org, id, step.publish, "bob", 1)
			mustOK(t, "publish", err)
		}
		for range step.save {
			mustOK(t, "save", s.SaveCardVersion(t.Context(), cards.record(org, id)))
		}
		got, err := latestActive(org, id)
		mustOK(t, fmt.Sprintf("step %d", i), err)
		if got != step.want {
			t.Errorf("step %d: got version %d, want %d", i, got, step.want)
		}
	}

	_, err = latestActive(org, newID())
	wantCode(t, "unknown card", err, cardflow.ENOTFOUND)
}
