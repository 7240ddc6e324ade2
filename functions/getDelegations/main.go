// Command getDelegations is the Lambda function of the getDelegations endpoint.
package main

import (
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode"
)

func main() { lambdamode.ServeEndpoint(httpapi.GetDelegations) }
