package sfnrunner

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// lambdaTraceKey is the context key under which aws-lambda-go keeps the
// invocation's X-Ray trace header.
const lambdaTraceKey = "x-amzn-trace-id"

// traceHeader is the X-Ray trace header of the Lambda invocation that
// starts an execution (the trigger or the scheduled run), nil outside
// Lambda. Given to StartExecution, it puts the state machine's execution,
// and so every Advance and Park of it, in the trigger's trace.
func traceHeader(ctx context.Context) *string {
	h, _ := ctx.Value(lambdaTraceKey).(string)
	if h == "" {
		h = os.Getenv("_X_AMZN_TRACE_ID")
	}
	if h == "" || len(h) > 256 {
		return nil
	}
	return aws.String(h)
}
