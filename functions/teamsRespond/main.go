// Command teamsRespond is the Lambda function of GET /v1/teams/respond: it checks a
// response link's signature and resumes the answered execution.
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
	h, err := answers.NewEndpointFunction(env, env.Logger(os.Stdout), lambdamode.TeamsRespond)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
