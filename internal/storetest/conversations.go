package storetest

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func testConversations(t *testing.T, e env) {
	conv := func(org, id string) *cardflow.TeamsConversation {
		return &cardflow.TeamsConversation{OrganizationID: org, ConversationID: id, ServiceURL: "https://smba.trafficmanager.net/emea/",
			TenantID: "tenant-" + org, Kind: "channel", Source: cardflow.ConversationByAdmin, RegisteredBy: "key-1", RegisteredOn: 1700000000000}
	}

	// A conversation belongs to one organization: another sees it as
	// absent, cannot take it, list it or remove it.
	t.Run("OneOrganization", func(t *testing.T) {
		s := e.store(t)
		org, other := newOrg(), newOrg()
		id := "19:" + newID() + "@thread.tacv2"
		_, err := s.GetConversation(t.Context(), org, id)
		wantCode(t, "get before any", err, cardflow.ENOTFOUND)
		_, err = s.FindConversation(t.Context(), id)
		wantCode(t, "find before any", err, cardflow.ENOTFOUND)

		want := conv(org, id)
		mustOK(t, "register", s.RegisterConversation(t.Context(), want))
		got, err := s.GetConversation(t.Context(), org, id)
		mustOK(t, "get", err)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("get: got %+v, want %+v", got, want)
		}
		if got, err := s.FindConversation(t.Context(), id); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("find: got %+v, %v, want %+v", got, err, want)
		}

		_, err = s.GetConversation(t.Context(), other, id)
		wantCode(t, "get by another organization", err, cardflow.ENOTFOUND)
		wantCode(t, "register by another organization", s.RegisterConversation(t.Context(), conv(other, id)), cardflow.ECONFLICT)
		wantCode(t, "delete by another organization", s.DeleteConversation(t.Context(), other, id), cardflow.ENOTFOUND)
		if l, err := s.ListConversations(t.Context(), other); err != nil || len(l) != 0 {
			t.Errorf("list of another organization: got %v, %v, want none", l, err)
		}
		if got, _ := s.FindConversation(t.Context(), id); got == nil || got.OrganizationID != org {
			t.Errorf("after another organization's tries: got %+v, want it still %s's", got, org)
		}

		// Registering again in the same organization replaces the record.
		again := conv(org, id)
		again.Source, again.ServiceURL = cardflow.ConversationByInstallation, "https://smba.trafficmanager.net/amer/"
		mustOK(t, "register again", s.RegisterConversation(t.Context(), again))
		if got, _ := s.GetConversation(t.Context(), org, id); !reflect.DeepEqual(got, again) {
			t.Errorf("after registering again: got %+v, want %+v", got, again)
		}

		mustOK(t, "delete", s.DeleteConversation(t.Context(), org, id))
		wantCode(t, "delete again", s.DeleteConversation(t.Context(), org, id), cardflow.ENOTFOUND)
		_, err = s.FindConversation(t.Context(), id)
		wantCode(t, "find after delete", err, cardflow.ENOTFOUND)
		// Once removed, another organization may register it.
		mustOK(t, "register by another after delete", s.RegisterConversation(t.Context(), conv(other, id)))
	})

	t.Run("List", func(t *testing.T) {
		s := e.store(t)
		org, other := newOrg(), newOrg()
		ids := []string{"19:a" + newID(), "19:b" + newID(), "a:1" + newID()}
		for _, id := range []string{ids[2], ids[0], ids[1]} {
			mustOK(t, "register", s.RegisterConversation(t.Context(), conv(org, id)))
		}
		mustOK(t, "register other", s.RegisterConversation(t.Context(), conv(other, "19:c"+newID())))
		l, err := s.ListConversations(t.Context(), org)
		mustOK(t, "list", err)
		var got []string
		for _, c := range l {
			got = append(got, c.ConversationID)
		}
		if !reflect.DeepEqual(got, ids) {
			t.Errorf("list: got %v, want %v (by conversation id)", got, ids)
		}
		if l, err := s.ListConversations(t.Context(), newOrg()); err != nil || l == nil || len(l) != 0 {
			t.Errorf("list of an organization without any: got %#v, %v, want an empty list", l, err)
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		s := e.store(t)
		org := newOrg()
		long := strings.Repeat("é", 1100) // 2200 bytes, more than a DynamoDB key holds
		for _, c := range []*cardflow.TeamsConversation{conv("", "19:x"), conv(org, ""), conv(org, " 19:x"), conv(org, "19:\x00x"), conv(org, long)} {
			wantCode(t, "register "+c.ConversationID, s.RegisterConversation(t.Context(), c), cardflow.EINVALID)
		}
		// Ids no conversation can have are simply not found.
		for _, id := range []string{"", " 19:x", long} {
			_, err := s.FindConversation(t.Context(), id)
			wantCode(t, "find an invalid id", err, cardflow.ENOTFOUND)
			_, err = s.GetConversation(t.Context(), org, id)
			wantCode(t, "get an invalid id", err, cardflow.ENOTFOUND)
			wantCode(t, "delete an invalid id", s.DeleteConversation(t.Context(), org, id), cardflow.ENOTFOUND)
		}
	})

	// Two organizations racing for one conversation: exactly one gets it.
	t.Run("Race", func(t *testing.T) {
		s := e.store(t)
		id := "19:" + newID()
		const n = 6
		orgs := make([]string, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			orgs[i] = newOrg()
			wg.Go(func() { errs[i] = s.RegisterConversation(t.Context(), conv(orgs[i], id)) })
		}
		wg.Wait()
		won := ""
		for i, err := range errs {
			if err == nil {
				if won != "" {
					t.Errorf("both %s and %s registered %s", won, orgs[i], id)
				}
				won = orgs[i]
				continue
			}
			wantCode(t, "register lost", err, cardflow.ECONFLICT)
		}
		if got, err := s.FindConversation(t.Context(), id); err != nil || got.OrganizationID != won {
			t.Errorf("find: got %+v, %v, want %s's", got, err, won)
		}
	})
}
