// Command housekeeping is the function a scheduled EventBridge rule invokes
// every few minutes: it times out overdue waits (waking their Step
// Functions tasks) and deletes expired records.
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
	h, err := env.NewHousekeepingFunction(logger, run)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
