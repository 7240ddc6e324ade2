// Command removeDelegation is the Lambda function of the removeDelegation endpoint.
package main

import (
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
)

func main() { lambdamode.ServeEndpoint(httpapi.RemoveDelegation) }
