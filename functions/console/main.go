// Command console is the Lambda function of the browser console: the page
// and bundle of pkg/console, embedded, behind the API at /console/. It
// also serves the schema of apply documents (package schemas), as public
// as the page.
package main

import (
	"log"
	"net/http"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/cardflow/cardflow/pkg/console"
	"github.com/cardflow/cardflow/schemas"
)

func main() {
	ui, err := console.New()
	if err != nil {
		log.Fatal(err)
	}
	schema := schemas.Handler()
	// API Gateway's REST API passes a compressed (binary) body only for
	// media types it is told are binary; the assets go uncompressed.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Accept-Encoding")
		if r.URL.Path == schemas.Path {
			schema.ServeHTTP(w, r)
			return
		}
		ui.ServeHTTP(w, r)
	})
	lambda.Start(httpadapter.New(h).ProxyWithContext)
}
