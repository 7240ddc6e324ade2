// Command saveWorkflow is the Lambda function of the saveWorkflow endpoint;
// it compiles the version's expressions, so it links CEL.
package main

import (
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
)

func main() {
	env, err := lambdamode.LoadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	exprs, err := expr.NewEnv()
	if err != nil {
		log.Fatal(err)
	}
	checker, err := engine.NewChecker(exprs)
	if err != nil {
		log.Fatal(err)
	}
	h, err := env.NewEndpointFunction(env.Logger(os.Stdout), httpapi.SaveWorkflow, app.WithChecker(checker))
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h.Handle)
}
