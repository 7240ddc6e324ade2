// Command teamsMessages is the Lambda function of POST /v1/teams/messages, the Teams bot's
// messaging endpoint: it checks the Bot Framework JWT and resumes the answered execution.
package main

import (
	"github.com/cardflow/cardflow/pkg/httpapi"
	"github.com/cardflow/cardflow/pkg/lambdamode/answers"
)

func main() { answers.ServeEndpoint(httpapi.TeamsMessages) }
