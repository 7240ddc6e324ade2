// Command saveWorkflow is the Lambda function of the saveWorkflow endpoint;
// it compiles the version's expressions, so it links CEL.
package main

import (
	"log/slog"

	"github.com/cardflow/cardflow/pkg/app"
	"github.com/cardflow/cardflow/pkg/engine"
	"github.com/cardflow/cardflow/pkg/expr"
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
)

func main() { lambdamode.ServeEndpoint(httpapi.SaveWorkflow, checker) }

// checker gives the service the engine's checker of workflow versions.
func checker(_ lambdamode.Env, _ *slog.Logger, deps *app.Deps) error {
	exprs, err := expr.NewEnv()
	if err != nil {
		return err
	}
	c, err := engine.NewChecker(exprs)
	if err != nil {
		return err
	}
	deps.Checker = c
	return nil
}
