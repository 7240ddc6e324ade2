package storetest

import (
	"reflect"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func testDelegations(t *testing.T, e env) {
	// An organization's delegations are one record with a revision: a put
	// at a stale revision changes nothing, and another organization's is
	// invisible.
	t.Run("Revision", func(t *testing.T) {
		s := e.store(t)
		org, other := newOrg(), newOrg()
		got, err := s.GetDelegations(t.Context(), org)
		mustOK(t, "get before any", err)
		if got.Revision != 0 || len(got.Items) != 0 || got.OrganizationID != org {
			t.Fatalf("get before any: got %+v, want none at revision 0", got)
		}
		d := cardflow.Delegation{DelegationID: "d1", Approver: "anna@example.com", Delegate: "ben@example.com",
			StartsOn: 1700000000000, EndsOn: 1800000000000, CreatedBy: "anna@example.com", CreatedOn: 1700000000000}
		got.Items = append(got.Items, d)
		mustOK(t, "put", s.PutDelegations(t.Context(), got))
		if got.Revision != 1 {
			t.Errorf("revision after the first put: got %d, want 1", got.Revision)
		}
		stale := &cardflow.Delegations{OrganizationID: org, Items: []cardflow.Delegation{}}
		wantCode(t, "put at revision 0 again", s.PutDelegations(t.Context(), stale), cardflow.ECONFLICT)

		read, err := s.GetDelegations(t.Context(), org)
		mustOK(t, "get", err)
		if !reflect.DeepEqual(read, got) {
			t.Errorf("get: got %+v, want %+v", read, got)
		}
		read.Items = read.Items[:0]
		mustOK(t, "put at revision 1", s.PutDelegations(t.Context(), read))
		wantCode(t, "put at revision 1 again", s.PutDelegations(t.Context(), got), cardflow.ECONFLICT)
		if again, err := s.GetDelegations(t.Context(), org); err != nil || again.Revision != 2 || len(again.Items) != 0 {
			t.Errorf("get after removing: got %+v, %v, want none at revision 2", again, err)
		}

		theirs, err := s.GetDelegations(t.Context(), other)
		mustOK(t, "get of another organization", err)
		if theirs.Revision != 0 || len(theirs.Items) != 0 {
			t.Errorf("another organization's: got %+v, want none", theirs)
		}
		// Another organization writing at revision 2 does not touch org's.
		theirs.Revision = 2
		wantCode(t, "put of another organization at org's revision", s.PutDelegations(t.Context(), theirs), cardflow.ECONFLICT)
	})
}
