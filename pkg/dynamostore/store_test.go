package dynamostore

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

func TestNew(t *testing.T) {
	client := &dynamodb.Client{}
	for _, tc := range []struct {
		name   string
		client Client
		opts   []Option
		ok     bool
	}{
		{"defaults", client, nil, true},
		{"prefix", client, []Option{WithTablePrefix("cardflow-prod-")}, true},
		{"no client", nil, nil, false},
		{"prefix with a space", client, []Option{WithTablePrefix("cardflow prod-")}, false},
		{"prefix too long", client, []Option{WithTablePrefix(strings.Repeat("p", 201))}, false},
		{"no logger", client, []Option{WithLogger(nil)}, false},
	} {
		_, err := New(tc.client, tc.opts...)
		if got := err == nil; got != tc.ok {
			t.Errorf("%s: got error %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// refusingClient fails the test on any request.
type refusingClient struct {
	Client
	t *testing.T
}

func (c refusingClient) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.t.Fatal("got a PutItem, want the record refused before any request")
	return nil, nil
}

func TestRecordTooLarge(t *testing.T) {
	s, err := New(refusingClient{t: t}, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	big := map[string]any{"note": strings.Repeat("x", maxRecordBytes)}
	for name, write := range map[string]func() error{
		"workflow": func() error {
			return s.SaveWorkflowVersion(t.Context(), &cardflow.Workflow{OrganizationID: "org-1", WorkflowSchema: big})
		},
		"execution": func() error {
			return s.CreateExecution(t.Context(), &cardflow.Execution{OrganizationID: "org-1", WorkflowID: "wf-1", WorkflowExecutionID: "ex-1", WorkflowInputPayload: big})
		},
	} {
		if got := cardflow.ErrorCode(write()); got != cardflow.ETOOLARGE {
			t.Errorf("%s over the item limit: got code %q, want %q", name, got, cardflow.ETOOLARGE)
		}
	}
}
