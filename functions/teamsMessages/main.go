// Command teamsMessages is the Lambda function of POST /v1/teams/messages, the Teams bot's
// messaging endpoint: it checks the Bot Framework JWT and resumes the answered execution.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/answers"
)

func main() {
	env, err := lambdamode.LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	h, err := answers.NewEndpointFunction(env, env.Logger(os.Stdout), lambdamode.TeamsMessages, nil)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
