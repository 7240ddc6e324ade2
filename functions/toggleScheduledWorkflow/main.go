// Command toggleScheduledWorkflow is the Lambda function of the toggleScheduledWorkflow endpoint; it manages
// EventBridge Scheduler schedules.
package main

import (
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/schedules"
)

func main() { lambdamode.ServeEndpoint(httpapi.ToggleScheduledWorkflow, schedules.Wire) }
