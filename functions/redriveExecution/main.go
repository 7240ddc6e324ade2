// Command redriveExecution is the Lambda function of the redriveExecution endpoint; it drives
// executions on the Step Functions runner.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/runner"
)

func main() {
	env, err := lambdamode.LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	h, err := runner.NewEndpointFunction(env, env.Logger(os.Stdout), httpapi.RedriveExecution)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
