//go:build !race

package expr

const raceDetector = false
