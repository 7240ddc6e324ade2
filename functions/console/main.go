// Command console is the Lambda function of the browser console: the page
// and bundle of pkg/console, embedded, behind the API at /console/.
package main

import (
	"log"
	"net/http"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/cardflow/cardflow/pkg/console"
)

func main() {
	ui, err := console.New()
	if err != nil {
		log.Fatal(err)
	}
	// API Gateway's REST API passes a compressed (binary) body only for
	// media types it is told are binary; the assets go uncompressed.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Accept-Encoding")
		ui.ServeHTTP(w, r)
	})
	lambda.Start(httpadapter.New(h).ProxyWithContext)
}
