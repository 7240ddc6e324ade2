// Command cancelExecution is the Lambda function of the cancelExecution endpoint; it drives
// executions on the Step Functions runner.
package main

import (
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/runner"
)

func main() { lambdamode.ServeEndpoint(httpapi.CancelExecution, runner.Wire) }
