// Command scheduleTarget is the function EventBridge Scheduler invokes: it
// starts the scheduled run a delivery names.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/schedules"
)

func main() {
	env, err := lambdamode.LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	h, err := schedules.NewTargetFunction(env, env.Logger(os.Stdout))
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
