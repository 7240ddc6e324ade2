package samlocal_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	awseb "github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/publish"
)

// takeAll is an EventBridge that takes every entry.
type takeAll struct{ entries int }

func (b *takeAll) PutEvents(_ context.Context, in *awseb.PutEventsInput, _ ...func(*awseb.Options)) (*awseb.PutEventsOutput, error) {
	b.entries += len(in.Entries)
	return &awseb.PutEventsOutput{Entries: make([]ebtypes.PutEventsResultEntry, len(in.Entries))}, nil
}

// checkPublishEvents runs the publisher on its sample stream batch, then
// as the schedule does, which drains what the other functions' changes put
// in the outbox.
func checkPublishEvents(t *testing.T, ctx context.Context, env lambdamode.Env, log *slog.Logger, sample any) {
	t.Run("publishEvents", func(t *testing.T) {
		store, err := env.OpenStore(log)
		if err != nil {
			t.Fatal(err)
		}
		bus := &takeAll{}
		f, err := publish.NewFunction(store, bus, "default", log)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(sample)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.Handle(ctx, raw)
		if err != nil || got != (publish.Report{Published: 1}) {
			t.Errorf("stream batch: got %+v, %v; want the sample's one event published", got, err)
		}
		drained, err := f.Handle(ctx, json.RawMessage(`{"source":"aws.events","detail-type":"Scheduled Event","detail":{}}`))
		if err != nil || drained.Published == 0 {
			t.Errorf("schedule: got %+v, %v; want the events of the other functions' changes published", drained, err)
		}
		if again, err := f.Handle(ctx, json.RawMessage(`{}`)); err != nil || again.Published != 0 {
			t.Errorf("second schedule: got %+v, %v; want an empty outbox", again, err)
		}
		if bus.entries != got.Published+drained.Published {
			t.Errorf("the bus got %d entries, want %d", bus.entries, got.Published+drained.Published)
		}
	})
}
