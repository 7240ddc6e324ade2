// Command previewCard is the Lambda function of the previewCard endpoint.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
)

func main() {
	env, err := lambdamode.LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	h, err := env.NewEndpointFunction(env.Logger(os.Stdout), httpapi.PreviewCard, app.WithCardExpander(cards.Checker{}))
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
