package httpapi

// BodyFree reports whether a request could take n bytes of s's budget of
// request bodies now, without waiting: the semaphore lets nobody in ahead
// of a request that waits.
func BodyFree(s *Server, n int64) bool {
	if s.bodies.TryAcquire(n) {
		s.bodies.Release(n)
		return true
	}
	return false
}

// Needs is the area each endpoint needs, by name (areas.go).
var Needs = needs
