package sfnrunner

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/cardflow/cardflow/pkg/cardflow"
)

// startRecorder records the StartExecution calls of a runner.
type startRecorder struct {
	API
	starts []*sfn.StartExecutionInput
}

func (s *startRecorder) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	s.starts = append(s.starts, in)
	return &sfn.StartExecutionOutput{}, nil
}

// TestStartJoinsTheTrace starts the state machine's execution in the
// X-Ray trace of the Lambda invocation that triggers it.
func TestStartJoinsTheTrace(t *testing.T) {
	t.Setenv("_X_AMZN_TRACE_ID", "")
	rec := &startRecorder{}
	r, err := New(rec, "arn:aws:states:eu-central-1:123456789012:stateMachine:cardflow-dev-runner")
	if err != nil {
		t.Fatal(err)
	}
	const header = "Root=1-67891233-abcdef012345678912345678;Parent=463ac35c9f6413ad;Sampled=1"
	ref := cardflow.ExecutionRef{OrganizationID: "org-a", WorkflowID: "wf", ExecutionID: "01JDEXAMPLE0000000000000000"}
	for _, c := range []struct {
		ctx  context.Context
		want string
	}{
		{context.WithValue(context.Background(), lambdaTraceKey, header), header}, //nolint:staticcheck // aws-lambda-go keys the header by this string
		{context.Background(), ""},
	} {
		rec.starts = nil
		if err := r.Start(c.ctx, ref); err != nil {
			t.Fatal(err)
		}
		if got := aws.ToString(rec.starts[0].TraceHeader); got != c.want {
			t.Errorf("TraceHeader: got %q, want %q", got, c.want)
		}
	}
}
