// Command reassignApproval is the Lambda function of the reassignApproval endpoint; it
// wakes the parked execution so that the new approver gets the card.
package main

import (
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/runner"
)

func main() { lambdamode.ServeEndpoint(httpapi.ReassignApproval, runner.Wire) }
