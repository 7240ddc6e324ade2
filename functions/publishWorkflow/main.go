// Command publishWorkflow is the Lambda function of the publishWorkflow endpoint; it manages
// EventBridge Scheduler schedules.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/schedules"
)

func main() {
	env, err := lambdamode.LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	h, err := schedules.NewEndpointFunction(env, env.Logger(os.Stdout), httpapi.PublishWorkflow)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
