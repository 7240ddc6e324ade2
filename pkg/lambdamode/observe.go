package lambdamode

import (
	"os"
	"sync"

	"github.com/cardflow/cardflow/pkg/cardflow"
	"github.com/cardflow/cardflow/pkg/emf"
	"github.com/cardflow/cardflow/pkg/telemetry"
)

// observer is the functions' one observer: CloudWatch metrics as EMF lines
// on stdout, which the function's log group turns into metrics. Traces are
// X-Ray's: API Gateway, the functions and the state machine trace with
// Tracing Active, and an execution's runner joins its trigger's trace
// (sfnrunner passes the trace header), so no tracer runs in process.
var observer = sync.OnceValue(func() cardflow.Observer {
	return telemetry.New(nil, emf.New(os.Stdout, nil))
})

// Observer returns the observer of the use cases and the engine.
func (e Env) Observer() cardflow.Observer { return observer() }
