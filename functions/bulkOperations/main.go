// Command bulkOperations is the function a scheduled EventBridge rule
// invokes every minute: it works the running bulk operations, cancelling
// or redriving their executions on the Step Functions runner.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/runner"
)

func main() {
	env, err := lambdamode.LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	logger := env.Logger(os.Stdout)
	run, err := runner.New(env, logger)
	if err != nil {
		log.Fatal(err)
	}
	h, err := env.NewBulkWorkerFunction(logger, run)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
