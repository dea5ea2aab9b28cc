package relay

import (
	"testing"

	"gateway/store"
)

// A status-code mapping the store accepts applies, spaces around its codes
// included.
func TestMapStatus_SpacesAsValidated(t *testing.T) {
	ch := &store.Channel{Name: "c", Type: 1, Key: "k", Models: "m", Status: 1, StatusCodeMapping: `{" 401 ": " 500 "}`}
	if err := ch.Validate(); err != nil {
		t.Fatalf("refused: %v", err)
	}
	if got := mapStatus(ch, 401); got != 500 {
		t.Fatalf("accepted mapping %s maps 401 to %d", ch.StatusCodeMapping, got)
	}
}

// A code the store accepts in another spelling ("+429", "0429") is the same
// code, and maps as the plain one does.
func TestMapStatus_CodeSpellingsAsValidated(t *testing.T) {
	for _, from := range []string{"+429", "0429", " 0429 "} {
		ch := &store.Channel{Name: "c", Type: 1, Key: "k", Models: "m", Status: 1, StatusCodeMapping: `{"` + from + `": "500"}`}
		if err := ch.Validate(); err != nil {
			t.Fatalf("%q refused: %v", from, err)
		}
		if got := mapStatus(ch, 429); got != 500 {
			t.Fatalf("accepted mapping %s maps 429 to %d", ch.StatusCodeMapping, got)
		}
	}
}
