// Command advance is the runner state machine's Advance task: it runs an execution's steps until it waits, sleeps or ends.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/advance"
)

func main() {
	env, err := lambdamode.LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	h, err := advance.NewHandlers(env, env.Logger(os.Stdout))
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Advance)
}
