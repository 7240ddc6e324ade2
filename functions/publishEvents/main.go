// Command publishEvents publishes cardflow's events to EventBridge: the
// executions table's stream invokes it with new outbox items, and a
// schedule invokes it to drain what is left.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/publish"
)

func main() {
	env, err := lambdamode.LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	logger := env.Logger(os.Stdout)
	f, err := publish.New(env, logger)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(f.Handle)
}
