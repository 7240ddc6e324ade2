package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func schema(org, workflowID string, version int) *cardflow.Schema {
	return &cardflow.Schema{
		OrganizationID:      org,
		WorkflowID:          workflowID,
		WorkflowVersion:     version,
		WorkflowMockPayload: map[string]any{"order_id": "4500001234", "amount": 1200.5},
		WorkflowSchema:      map[string]any{"type": "object", "required": []any{"order_id"}},
		CreatedBy:           "alice",
		CreatedOn:           1700000000000,
		ModifiedOn:          1700000000000,
	}
}

func sameSchema(t *testing.T, what string, got, want *cardflow.Schema) {
	t.Helper()
	if got.OrganizationID != want.OrganizationID {
		t.Errorf("%s: got organization %q, want %q", what, got.OrganizationID, want.OrganizationID)
	}
	sameJSON(t, what, got, want)
}

func testSchemas(t *testing.T, e env) {
	s := e.store(t)
	org := newOrg()
	wf := workflows.create(t, s, org, 2)
	want := schema(org, wf, 2)
	mustOK(t, "put", s.PutSchema(t.Context(), want))
	got, err := s.GetSchema(t.Context(), org, wf, 2)
	mustOK(t, "get", err)
	sameSchema(t, "get after put", got, want)

	for _, tc := range []struct {
		name       string
		workflowID string
		version    int
	}{
		{"unknown version", wf, 1},
		{"unknown workflow", newID(), 2},
	} {
		_, err := s.GetSchema(t.Context(), org, tc.workflowID, tc.version)
		wantCode(t, tc.name, err, cardflow.ENOTFOUND)
	}

	by := "bob"
	want.WorkflowSchema, want.ModifiedBy, want.ModifiedOn = map[string]any{"type": "object"}, &by, 1700000005000
	mustOK(t, "put again", s.PutSchema(t.Context(), want))
	got, err = s.GetSchema(t.Context(), org, wf, 2)
	mustOK(t, "get after second put", err)
	sameSchema(t, "get after second put", got, want)
}

func apiKey(org string) *cardflow.APIKey {
	id := newID()
	hash := sha256.Sum256([]byte(id))
	return &cardflow.APIKey{
		KeyID:          id,
		Hash:           hex.EncodeToString(hash[:]),
		Name:           "ci",
		OrganizationID: org,
		WorkspaceID:    "ws-1",
		Scopes:         []string{cardflow.ScopeRead, cardflow.ScopeExecute},
		CreatedOn:      1700000000000,
	}
}

func keyIDs(keys []*cardflow.APIKey) []string {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.KeyID
	}
	slices.Sort(ids)
	return ids
}

func testAPIKeys(t *testing.T, e env) {
	s := e.store(t)
	org, other := newOrg(), newOrg()
	a1, a2, b1 := apiKey(org), apiKey(org), apiKey(other)
	for _, k := range []*cardflow.APIKey{a1, a2, b1} {
		mustOK(t, "create", s.CreateAPIKey(t.Context(), k))
		got, err := s.GetAPIKeyByHash(t.Context(), k.Hash)
		mustOK(t, "get by hash", err)
		sameJSON(t, "get by hash", got, k)
	}

	sameHash, sameID := apiKey(org), apiKey(org)
	sameHash.Hash, sameID.KeyID = a1.Hash, a1.KeyID
	wantCode(t, "create with a used hash", s.CreateAPIKey(t.Context(), sameHash), cardflow.ECONFLICT)
	wantCode(t, "create with a used key id", s.CreateAPIKey(t.Context(), sameID), cardflow.ECONFLICT)
	for name, hash := range map[string]string{"unknown hash": apiKey(org).Hash, "hash of a refused key": sameID.Hash} {
		_, err := s.GetAPIKeyByHash(t.Context(), hash)
		wantCode(t, name, err, cardflow.ENOTFOUND)
	}
	got, err := s.GetAPIKeyByHash(t.Context(), a1.Hash)
	mustOK(t, "get after conflicts", err)
	sameJSON(t, "get after conflicts", got, a1)

	// The order of key lists is not part of the port.
	for _, tc := range []struct {
		name string
		org  string
		want []*cardflow.APIKey
	}{
		{"organization", org, []*cardflow.APIKey{a1, a2}},
		{"other organization", other, []*cardflow.APIKey{b1}},
		{"organization without keys", newOrg(), nil},
	} {
		keys, err := s.ListAPIKeys(t.Context(), tc.org)
		mustOK(t, "list "+tc.name, err)
		if got, want := keyIDs(keys), keyIDs(tc.want); !slices.Equal(got, want) {
			t.Errorf("list %s: got %v, want %v", tc.name, got, want)
		}
	}
	// Other tests may share the backend, so the list of all keys is only
	// checked to hold these.
	all, err := s.ListAPIKeys(t.Context(), "")
	mustOK(t, "list all", err)
	for _, k := range []*cardflow.APIKey{a1, a2, b1} {
		if !slices.Contains(keyIDs(all), k.KeyID) {
			t.Errorf("list all: got %v, want it to hold %s", keyIDs(all), k.KeyID)
		}
	}

	revoked, err := s.RevokeAPIKey(t.Context(), a1.KeyID, 1700000009000)
	mustOK(t, "revoke", err)
	if revoked.KeyID != a1.KeyID || revoked.RevokedOn != 1700000009000 {
		t.Errorf("revoke: got key %s revoked on %d, want %s revoked on 1700000009000", revoked.KeyID, revoked.RevokedOn, a1.KeyID)
	}
	for _, tc := range []struct {
		key     *cardflow.APIKey
		revoked bool
	}{{a1, true}, {a2, false}} {
		got, err := s.GetAPIKeyByHash(t.Context(), tc.key.Hash)
		mustOK(t, "get after revoke", err)
		if (got.RevokedOn != 0) != tc.revoked {
			t.Errorf("key %s after revoking %s: got revoked_on %d, want revoked %v", tc.key.KeyID, a1.KeyID, got.RevokedOn, tc.revoked)
		}
	}
	again, err := s.RevokeAPIKey(t.Context(), a1.KeyID, 1700000010000)
	mustOK(t, "revoke again", err)
	if again.RevokedOn == 0 {
		t.Errorf("revoke again: got revoked_on 0, want it set")
	}
	_, err = s.RevokeAPIKey(t.Context(), newID(), 1700000010000)
	wantCode(t, "revoke unknown key", err, cardflow.ENOTFOUND)
}

// testIsolation checks that another organization sees none of a record, and
// changes none of it: every call naming it answers NOT_FOUND, every list
// leaves it out.
func testIsolation(t *testing.T, e env) {
	s := e.store(t)
	org, foreign := newOrg(), newOrg()
	ctx := t.Context()

	wf := workflows.create(t, s, org, 1)
	_, err := s.PublishWorkflow(ctx, org, wf, 1, "alice", 1)
	mustOK(t, "publish workflow", err)
	card := cards.create(t, s, org, 1)
	_, err = s.PublishCard(ctx, org, card, 1, "alice", 1)
	mustOK(t, "publish card", err)
	ex := execution(org, wf)
	mustOK(t, "create execution", s.CreateExecution(ctx, ex))
	sc := schema(org, wf, 1)
	mustOK(t, "put schema", s.PutSchema(ctx, sc))
	// A record of the same kind in the foreign organization, so its lists
	// are not trivially empty.
	theirWF := workflows.create(t, s, foreign, 1)

	foreignEx := *ex
	foreignEx.OrganizationID, foreignEx.Status = foreign, cardflow.ExecCancelled
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"GetWorkflow", func() error { _, err := s.GetWorkflow(ctx, foreign, wf, 1); return err }},
		{"SaveWorkflowVersion", func() error { return s.SaveWorkflowVersion(ctx, workflows.record(foreign, wf)) }},
		{"PublishWorkflow", func() error { _, err := s.PublishWorkflow(ctx, foreign, wf, 1, "mallory", 2); return err }},
		{"GetCard", func() error { _, err := s.GetCard(ctx, foreign, card, 1); return err }},
		{"GetLatestActiveCard", func() error { _, err := s.GetLatestActiveCard(ctx, foreign, card); return err }},
		{"SaveCardVersion", func() error { return s.SaveCardVersion(ctx, cards.record(foreign, card)) }},
		{"PublishCard", func() error { _, err := s.PublishCard(ctx, foreign, card, 1, "mallory", 2); return err }},
		{"GetExecution", func() error { _, err := s.GetExecution(ctx, foreign, wf, ex.WorkflowExecutionID); return err }},
		{"PutExecution", func() error { return s.PutExecution(ctx, &foreignEx) }},
		{"ListWorkflowExecutions", func() error {
			_, err := s.ListWorkflowExecutions(ctx, foreign, wf, cardflow.ListOptions[cardflow.ExecutionKey]{})
			return err
		}},
		{"GetSchema", func() error { _, err := s.GetSchema(ctx, foreign, wf, 1); return err }},
	} {
		wantCode(t, tc.name, tc.call(), cardflow.ENOTFOUND)
	}

	wfs, err := s.ListWorkflows(ctx, foreign, cardflow.ListOptions[cardflow.WorkflowKey]{})
	mustOK(t, "ListWorkflows", err)
	if got := workflows.refs(wfs.Items); !slices.Equal(got, []ref{{theirWF, 1}}) {
		t.Errorf("ListWorkflows of the other organization: got %v, want only its own %v", got, []ref{{theirWF, 1}})
	}
	cs, err := s.ListCards(ctx, foreign, cardflow.ListOptions[cardflow.CardKey]{})
	mustOK(t, "ListCards", err)
	if len(cs.Items) != 0 {
		t.Errorf("ListCards of the other organization: got %v, want none", cards.refs(cs.Items))
	}
	exs, err := s.ListExecutions(ctx, foreign, cardflow.ListOptions[cardflow.ExecutionKey]{})
	mustOK(t, "ListExecutions", err)
	if len(exs.Items) != 0 {
		t.Errorf("ListExecutions of the other organization: got %v, want none", executionIDs(exs.Items))
	}

	// The owner still sees every record as it was.
	gotWF, err := s.GetWorkflow(ctx, org, wf, 1)
	mustOK(t, "owner GetWorkflow", err)
	if f := workflows.fields(gotWF); f.modifiedBy != "alice" || !f.latest {
		t.Errorf("owner's workflow: got modified by %q latest %v, want alice, true", f.modifiedBy, f.latest)
	}
	gotCard, err := s.GetCard(ctx, org, card, 1)
	mustOK(t, "owner GetCard", err)
	if gotCard.ModifiedBy != "alice" || !gotCard.Latest {
		t.Errorf("owner's card: got modified by %q latest %v, want alice, true", gotCard.ModifiedBy, gotCard.Latest)
	}
	for name, n := range map[string]func() error{
		"workflow version 2": func() error { _, err := s.GetWorkflow(ctx, org, wf, 2); return err },
		"card version 2":     func() error { _, err := s.GetCard(ctx, org, card, 2); return err },
	} {
		wantCode(t, "owner "+name, n(), cardflow.ENOTFOUND)
	}
	gotEx, err := s.GetExecution(ctx, org, wf, ex.WorkflowExecutionID)
	mustOK(t, "owner GetExecution", err)
	sameJSON(t, "owner's execution", gotEx, ex)
	gotSc, err := s.GetSchema(ctx, org, wf, 1)
	mustOK(t, "owner GetSchema", err)
	sameSchema(t, "owner's schema", gotSc, sc)
}
