// Command setDelegation is the Lambda function of the setDelegation endpoint; it
// wakes the parked executions whose approvals move_pending hands on, so
// that the delegate gets the card.
package main

import (
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/runner"
)

func main() { lambdamode.ServeEndpoint(httpapi.SetDelegation, runner.Wire) }
