package steps

// Kinds are the step kinds workflows may use, in the order messages list
// them. A new kind is its own file and one entry here.
var Kinds = mustRegistry(
	Trigger,
	HTTP,
	ERP,
	Transform,
	Condition,
	Card,
	Approval,
	Wait,
	Delay,
	End,
)

func mustRegistry(kinds ...Kind) *Registry {
	r, err := NewRegistry(kinds...)
	if err != nil {
		panic(err)
	}
	return r
}
