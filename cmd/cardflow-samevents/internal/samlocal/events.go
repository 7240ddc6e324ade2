package samlocal

import (
	"encoding/json"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/dynamostore"
)

// publishEvent is the stream record of the outbox item that holds the
// started event of the sample execution.
func publishEvent(f *Fixture, workflowID string) (events.DynamoDBEvent, error) {
	ev := cardflow.Published{
		ID: cardflow.EventID(f.ExecutionID, 1), Type: cardflow.EventTypeStarted, OrganizationID: Organization,
		WorkflowID: workflowID, WorkflowVersion: 2, ExecutionID: f.ExecutionID, Status: cardflow.ExecRunning,
		Time: f.SeededAt.UnixMilli(),
	}
	record, err := json.Marshal(ev)
	if err != nil {
		return events.DynamoDBEvent{}, err
	}
	keys := map[string]events.DynamoDBAttributeValue{
		"workflow_id":           events.NewStringAttribute(dynamostore.EventPartition(f.ExecutionID)),
		"workflow_execution_id": events.NewStringAttribute(ev.ID),
	}
	image := map[string]events.DynamoDBAttributeValue{"record": events.NewStringAttribute(string(record))}
	for k, v := range keys {
		image[k] = v
	}
	return events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{
		AWSRegion: "us-east-1", EventID: "c4ca4238a0b923820dcc509a6f75849b", EventName: string(events.DynamoDBOperationTypeInsert),
		EventVersion: "1.1", EventSource: "aws:dynamodb",
		EventSourceArn: "arn:aws:dynamodb:us-east-1:123456789012:table/cardflow-dev-executions/stream/2026-11-27T00:00:00.000",
		Change: events.DynamoDBStreamRecord{
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: f.SeededAt.UTC().Truncate(time.Second)},
			Keys:                        keys, NewImage: image, SequenceNumber: "111", SizeBytes: 26,
			StreamViewType: string(events.DynamoDBStreamViewTypeNewImage),
		},
	}}}, nil
}
