//go:build !race

package api_test

// raceOn is set under the race detector, whose instrumentation moves some
// values to the heap: allocations are not counted there.
const raceOn = false
