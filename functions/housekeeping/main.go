// Command housekeeping is the function a scheduled EventBridge rule invokes
// every few minutes: it times out overdue waits and deletes expired records.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/lambdamode"
)

func main() {
	env, err := lambdamode.LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	h, err := env.NewHousekeepingFunction(env.Logger(os.Stdout))
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
