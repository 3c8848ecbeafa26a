//go:build !race

package livecal

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
