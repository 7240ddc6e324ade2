// Command teamsRespond is the Lambda function of /v1/teams/respond: GET and
// HEAD show a response link's confirmation page and change nothing; POST,
// from that page's form, records the answer and resumes the execution.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/answers"
)

func main() {
	env, err := lambdamode.LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	// The page shows the card's text: the card templates are linked here only.
	h, err := answers.NewEndpointFunction(env, env.Logger(os.Stdout), lambdamode.TeamsRespond, []app.Option{app.WithCardReader(cards.Reader{})})
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
