// Command overrideApproval is the Lambda function of the overrideApproval endpoint; it
// wakes the parked execution so that the approval step leaves by the decision.
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
	h, err := runner.NewEndpointFunction(env, env.Logger(os.Stdout), httpapi.OverrideApproval)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
