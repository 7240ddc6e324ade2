// Package eventbridge publishes cardflow's events to an Amazon EventBridge
// bus, the outbox relay's publisher on AWS. Each event is one entry:
// source "cardflow", detail type the event's type
// (cardflow.execution.succeeded, cardflow.approval.decided, ...), detail
// the event as JSON, with its id to deduplicate.
package eventbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// API is the part of the EventBridge API the publisher calls;
// *eventbridge.Client has it.
type API interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// maxEntries is how many entries one PutEvents takes.
const maxEntries = 10

// Publisher puts events on one bus.
type Publisher struct {
	api API
	bus string
}

// New returns a publisher to bus ("default" when empty).
func New(api API, bus string) (*Publisher, error) {
	if api == nil {
		return nil, errors.New("eventbridge: a client is required")
	}
	if bus == "" {
		bus = "default"
	}
	return &Publisher{api: api, bus: bus}, nil
}

// Publish puts events in batches of ten and returns those EventBridge
// took; an entry it refused stays pending for a later pass.
func (p *Publisher) Publish(ctx context.Context, events []*cardflow.Published) ([]*cardflow.Published, error) {
	var done []*cardflow.Published
	for len(events) > 0 {
		batch := events[:min(len(events), maxEntries)]
		events = events[len(batch):]
		entries := make([]types.PutEventsRequestEntry, len(batch))
		for i, ev := range batch {
			detail, err := json.Marshal(ev)
			if err != nil {
				return done, err
			}
			entries[i] = types.PutEventsRequestEntry{
				EventBusName: aws.String(p.bus), Source: aws.String(cardflow.EventSource), DetailType: aws.String(ev.Type),
				Detail: aws.String(string(detail)), Time: aws.Time(time.UnixMilli(ev.Time)),
			}
		}
		out, err := p.api.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
		if err != nil {
			return done, fmt.Errorf("eventbridge: put events on %s: %w", p.bus, err)
		}
		var refused error
		for i, r := range out.Entries {
			if i >= len(batch) {
				break
			}
			if r.ErrorCode == nil {
				done = append(done, batch[i])
			} else if refused == nil {
				refused = fmt.Errorf("eventbridge: event %s refused: %s %s", batch[i].ID, aws.ToString(r.ErrorCode), aws.ToString(r.ErrorMessage))
			}
		}
		if refused != nil {
			return done, refused
		}
	}
	return done, nil
}
