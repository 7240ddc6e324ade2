// Command authorizer is the API's Lambda REQUEST authorizer on x-api-key.
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
	h, err := env.NewAuthorizerFunction(env.Logger(os.Stdout))
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
