// Command registerConversation is the Lambda function of the registerConversation endpoint.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
)

func main() {
	env, err := lambdamode.LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	h, err := env.NewEndpointFunction(env.Logger(os.Stdout), httpapi.RegisterConversation)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
