package eventbridge_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awseb "github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/cardflow/cardflow/internal/mototest"
	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/eventbridge"
)

// TestPublishToMoto puts events on a bus of moto's EventBridge, whose rule
// sends them to an SQS queue, and reads them there as a consumer would.
func TestPublishToMoto(t *testing.T) {
	endpoint := mototest.Endpoint(t)
	eb := awseb.New(awseb.Options{Region: mototest.Region, BaseEndpoint: aws.String(endpoint), Credentials: mototest.Credentials()})
	q := sqs.New(sqs.Options{Region: mototest.Region, BaseEndpoint: aws.String(endpoint), Credentials: mototest.Credentials()})
	ctx := t.Context()

	bus := mototest.Name("cardflow-events")
	if _, err := eb.CreateEventBus(ctx, &awseb.CreateEventBusInput{Name: aws.String(bus)}); err != nil {
		t.Fatalf("create bus: %v", err)
	}
	queue, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(mototest.Name("cardflow-events"))})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	attrs, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: queue.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	rule := mototest.Name("cardflow")
	if _, err := eb.PutRule(ctx, &awseb.PutRuleInput{Name: aws.String(rule), EventBusName: aws.String(bus), EventPattern: aws.String(`{"source":["cardflow"]}`)}); err != nil {
		t.Fatalf("put rule: %v", err)
	}
	if _, err := eb.PutTargets(ctx, &awseb.PutTargetsInput{Rule: aws.String(rule), EventBusName: aws.String(bus),
		Targets: []ebtypes.Target{{Id: aws.String("queue"), Arn: aws.String(attrs.Attributes["QueueArn"])}}}); err != nil {
		t.Fatalf("put targets: %v", err)
	}

	p, err := eventbridge.New(eb, bus)
	if err != nil {
		t.Fatal(err)
	}
	var events []*cardflow.Published
	for i := range 12 { // two PutEvents calls
		events = append(events, &cardflow.Published{ID: cardflow.EventID("01JEXEC", i+1), Type: cardflow.EventTypeSucceeded,
			OrganizationID: "acme", WorkflowID: "WF1", WorkflowVersion: 3, ExecutionID: "01JEXEC", Status: cardflow.ExecSucceeded, Time: 1_800_000_000_000 + int64(i)})
	}
	events[11].Type, events[11].Approver, events[11].Decision = cardflow.EventTypeApprovalDecided, "ann@example.com", "approved"
	done, err := p.Publish(ctx, events)
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	if len(done) != len(events) {
		t.Fatalf("got %d published, want %d", len(done), len(events))
	}

	var got []string
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < len(events) && time.Now().Before(deadline) {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queue.QueueUrl, MaxNumberOfMessages: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			var env struct {
				Source     string             `json:"source"`
				DetailType string             `json:"detail-type"`
				Time       string             `json:"time"`
				Detail     cardflow.Published `json:"detail"`
			}
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &env); err != nil {
				t.Fatalf("message %s: %v", aws.ToString(m.Body), err)
			}
			if env.Source != "cardflow" || env.DetailType != env.Detail.Type || env.Detail.OrganizationID != "acme" || env.Detail.WorkflowVersion != 3 {
				t.Errorf("got event %s, want source cardflow, the detail type of its detail, of acme's WF1 version 3", aws.ToString(m.Body))
			}
			if env.DetailType == cardflow.EventTypeApprovalDecided && (env.Detail.Approver != "ann@example.com" || env.Detail.Decision != "approved") {
				t.Errorf("got decision %+v, want ann@example.com approved", env.Detail)
			}
			got = append(got, env.Detail.ID)
		}
	}
	var want []string
	for _, ev := range events {
		want = append(want, ev.ID)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("got ids %v, want %v", got, want)
	}
}
