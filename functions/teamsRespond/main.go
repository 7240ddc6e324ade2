// Command teamsRespond is the Lambda function of /v1/teams/respond: GET and
// HEAD show a response link's confirmation page and change nothing; POST,
// from that page's form, records the answer and resumes the execution.
// The page shows the card's text: the card templates are linked here only.
package main

import (
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
	"github.com/cardflow/cardflow/pkg/lambdamode/answers"
)

func main() {
	answers.ServeEndpoint(httpapi.TeamsRespond, lambdamode.With(func(d *app.Deps) { d.CardReader = cards.Reader{} }))
}
