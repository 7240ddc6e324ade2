package teams_test

import (
	"context"
	"testing"

	"github.com/cardflow/cardflow/internal/fakes/teamstest"
	"github.com/cardflow/cardflow/pkg/teams"
)

// BenchmarkVerify checks one Bot Framework JWT with the signing keys cached,
// the work of every call to the messaging endpoint.
func BenchmarkVerify(b *testing.B) {
	f := newFixture(b)
	header := "Bearer " + teamstest.Sign(b, f.fake.Key, teamstest.KeyID, "RS256", teamstest.Claims(f.clock.now(), f.fake.ServiceURL()))
	ctx := context.Background()
	if _, err := f.in.Verify(ctx, header); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.in.Verify(ctx, header); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyLink checks one response link token.
func BenchmarkVerifyLink(b *testing.B) {
	key := []byte(signingKey)
	now := fixtureTime()
	token, err := teams.SignLink(key, teams.Ref{OrganizationID: "org-a", ProcessID: "PO-4711", ExecutionID: "01KEXECUTION0000000000000", Wait: 1,
		Choice: map[string]any{"decision": "approve"}, Expires: now.Unix() + 3600})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := teams.VerifyLink(key, token, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWithActionData signs a card's buttons for the bot.
func BenchmarkWithActionData(b *testing.B) {
	card := approvalCard()
	key := []byte(signingKey)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := teams.WithActionData(card, func(o teams.Offer) (string, error) {
			return teams.SignAction(key, teams.Ref{OrganizationID: "org-a", ProcessID: "PO-4711", ExecutionID: "ex1", Wait: 1}, o)
		}); err != nil {
			b.Fatal(err)
		}
	}
}
