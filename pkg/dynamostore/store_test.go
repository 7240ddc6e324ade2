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

func TestNewClient(t *testing.T) {
	// Nothing of the machine's AWS configuration may decide the region.
	for _, v := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	for _, tc := range []struct {
		endpoint string
		ok       bool
	}{
		{"http://localhost:8000", true},
		{"https://dynamodb.local.test", true},
		{"localhost:8000", false},
		{"ftp://localhost", false},
		{"http://", false},
	} {
		c, err := NewClient(t.Context(), tc.endpoint, "")
		if got := err == nil; got != tc.ok {
			t.Errorf("endpoint %q: got error %v, want ok %v", tc.endpoint, err, tc.ok)
			continue
		}
		if c == nil {
			continue
		}
		// A local endpoint needs no AWS account: fake credentials and a region.
		o := c.Options()
		if o.Region != "us-east-1" {
			t.Errorf("endpoint %q: got region %q, want us-east-1", tc.endpoint, o.Region)
		}
		creds, err := o.Credentials.Retrieve(t.Context())
		if err != nil || creds.AccessKeyID != "local" {
			t.Errorf("endpoint %q: got credentials %q, %v; want the fake static ones", tc.endpoint, creds.AccessKeyID, err)
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
