//go:build race

package expr

// raceDetector is set in builds with the race detector, which turns off the
// compiler's counting of runes without a conversion: cel-go's own
// String.Size then allocates four bytes per character each time its cost
// tracker sizes a string.
const raceDetector = true
