// Package publish is the function that publishes cardflow's events to
// EventBridge on AWS. Its events come from two sources: the executions
// table's DynamoDB stream, filtered to new outbox items, which it
// publishes at once, and a schedule, on which it drains whatever the
// outbox still holds (a stream batch that failed past its retries). An
// event leaves the outbox only once EventBridge took it.
package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awseb "github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
	"github.com/cardflow/cardflow/pkg/eventbridge"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/outbox"
)

// Client returns an EventBridge client; it connects on first use. optFns
// adjust it (tests point it at a stand-in).
func Client(env lambdamode.Env, optFns ...func(*awseb.Options)) *awseb.Client {
	o := awseb.Options{Region: env.Region, Credentials: env.Credentials()}
	if env.EventsEndpoint != "" {
		o.BaseEndpoint = aws.String(env.EventsEndpoint)
	}
	return awseb.New(o, optFns...)
}

// Function publishes events.
type Function struct {
	store outbox.Store
	pub   outbox.Publisher
	relay *outbox.Relay
	log   *slog.Logger
}

// Report is what one invocation did.
type Report struct {
	Published int `json:"published"`
	// Pending counts events left in the outbox for a later invocation.
	Pending int `json:"pending"`
}

// New builds the function over the configured tables and bus.
func New(env lambdamode.Env, log *slog.Logger, optFns ...func(*awseb.Options)) (*Function, error) {
	if log == nil {
		return nil, errors.New("publish: a logger is required")
	}
	store, err := env.OpenStore(log)
	if err != nil {
		return nil, err
	}
	return NewFunction(store, Client(env, optFns...), env.EventBus, log)
}

// NewFunction builds the function over store, publishing to bus via api.
func NewFunction(store outbox.Store, api eventbridge.API, bus string, log *slog.Logger) (*Function, error) {
	pub, err := eventbridge.New(api, bus)
	if err != nil {
		return nil, err
	}
	relay, err := outbox.New(store, pub, outbox.WithLogger(log))
	if err != nil {
		return nil, err
	}
	return &Function{store: store, pub: pub, relay: relay, log: log}, nil
}

// Handle publishes the outbox items of a stream batch, or, for any other
// event (the schedule's), drains the outbox. An error makes Lambda retry
// the batch; what is left waits for the schedule either way.
func (f *Function) Handle(ctx context.Context, raw json.RawMessage) (Report, error) {
	var batch events.DynamoDBEvent
	if err := json.Unmarshal(raw, &batch); err != nil || len(batch.Records) == 0 {
		n, err := f.relay.Drain(ctx)
		f.log.InfoContext(ctx, "events drained", slog.Int("published", n))
		if err != nil {
			f.log.ErrorContext(ctx, "events not published", slog.Any("error", err))
		}
		return Report{Published: n}, err
	}
	var pending []*cardflow.Published
	for _, r := range batch.Records {
		if r.EventName != string(events.DynamoDBOperationTypeInsert) && r.EventName != string(events.DynamoDBOperationTypeModify) {
			continue
		}
		img := r.Change.NewImage
		ev, ok, err := dynamostore.StreamedEvent(attr(img, "workflow_id"), attr(img, "record"))
		if err != nil {
			return Report{}, err
		}
		if ok {
			pending = append(pending, ev)
		}
	}
	if len(pending) == 0 {
		return Report{}, nil
	}
	done, err := f.pub.Publish(ctx, pending)
	if len(done) > 0 {
		if derr := f.store.DeletePendingEvents(ctx, done); derr != nil && err == nil {
			// Published: the schedule's drain publishes them again, which
			// at least once allows.
			f.log.WarnContext(ctx, "published events stay in the outbox", slog.Any("error", derr))
		}
	}
	rep := Report{Published: len(done), Pending: len(pending) - len(done)}
	f.log.InfoContext(ctx, "events published", slog.Int("published", rep.Published), slog.Int("pending", rep.Pending))
	if err == nil && rep.Pending > 0 {
		err = fmt.Errorf("publish: %d events not published", rep.Pending)
	}
	return rep, err
}

// attr returns a string attribute of a stream image, "" when absent.
func attr(img map[string]events.DynamoDBAttributeValue, name string) string {
	v, ok := img[name]
	if !ok || v.DataType() != events.DataTypeString {
		return ""
	}
	return v.String()
}
