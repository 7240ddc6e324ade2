// Command overrideApproval is the Lambda function of the overrideApproval endpoint; it
// wakes the parked execution so that the approval step leaves by the decision.
package main

import (
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/runner"
)

func main() { lambdamode.ServeEndpoint(httpapi.OverrideApproval, runner.Wire) }
