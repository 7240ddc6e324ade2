// Command saveCard is the Lambda function of the saveCard endpoint; it
// checks cards, so it alone links the card validator.
package main

import (
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
)

func main() {
	lambdamode.ServeEndpoint(httpapi.SaveCard, lambdamode.With(func(d *app.Deps) { d.CardChecker = cards.Checker{} }))
}
