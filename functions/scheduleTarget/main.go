// Command scheduleTarget is the function EventBridge Scheduler invokes: it
// starts the scheduled run a delivery names on the Step Functions runner.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/runner"
	"github.com/cardflow/cardflow/pkg/lambdamode/schedules"
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
	h, err := schedules.NewTargetFunction(env, logger, run)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
