package cardflow

// ExecutionNotifier is told after a change of an execution is stored (the
// engine's steps, a cancel), so that requests waiting for the execution
// (waitForExecution) wake at once instead of polling the store.
type ExecutionNotifier interface {
	ExecutionChanged(ref ExecutionRef)
}

// ExecutionWatcher lets a request wait for an execution to change.
type ExecutionWatcher interface {
	// Watch returns a channel that receives once ref may have changed
	// after Watch was called; several changes may come as one signal, so
	// the waiter reads the execution again each time. The channel is
	// closed when the watcher stops (the server shuts down): the waiter
	// then answers with what it has. stop ends the watch; call it once.
	Watch(ref ExecutionRef) (changed <-chan struct{}, stop func())
}
