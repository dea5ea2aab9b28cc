//go:build race

package store

// raceDetector tells tests that the race detector slows them: the
// randomized ones then check fewer cases.
const raceDetector = true
