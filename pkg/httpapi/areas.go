package httpapi

import "github.com/cardflow/cardflow/pkg/app"

// needs names the area of the use cases each endpoint needs beyond those
// every app.Service holds, by endpoint name: NewEndpoints refuses a
// service without it, so a program wired wrong fails at start. The keys
// are names, not the Endpoint variables, so that a function of one
// endpoint links no other endpoint's handler; TestNeedsNameEndpoints
// checks them.
var needs = map[string]app.Area{
	"saveWorkflow":            app.AreaWorkflowEditor,
	"saveCard":                app.AreaCardEditor,
	"previewCard":             app.AreaCardPreviews,
	"toggleScheduledWorkflow": app.AreaSchedules,
	"triggerWorkflow":         app.AreaRuns,
	"cancelExecution":         app.AreaRuns,
	"redriveExecution":        app.AreaRuns,
	"resumeWorkflow":          app.AreaRuns,
	"answerApproval":          app.AreaRuns,
	"reassignApproval":        app.AreaRuns,
	"overrideApproval":        app.AreaRuns,
	"setDelegation":           app.AreaRuns,
}
