// Command park is the runner state machine's Park task: it stores a wait's task token so that a resume can end the task.
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
	h, err := runner.NewParkFunction(env, env.Logger(os.Stdout))
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Park)
}
