//go:build race

package relay_test

// timeSlack scales the relay timeouts of the timing-heavy tests: under the
// race detector on a loaded machine a healthy attempt can take longer than
// the tight timeouts that keep those tests short.
const timeSlack = 4

// raceOn is set under the race detector, where sync.Pool drops some of
// what it is given at random: allocations are not counted there.
const raceOn = true
