// Command previewCard is the Lambda function of the previewCard endpoint.
package main

import (
	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/cards"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
)

func main() {
	lambdamode.ServeEndpoint(httpapi.PreviewCard, lambdamode.With(func(d *app.Deps) { d.CardExpander = cards.Checker{} }))
}
