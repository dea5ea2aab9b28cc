package relay

import (
	"testing"

	json "github.com/goccy/go-json"
)

func TestLooseCount(t *testing.T) {
	for in, want := range map[string]int{
		`12`: 12, `12.0`: 12, `12.2`: 13, `"7"`: 7, `" 7 "`: 7, `"7.5"`: 8, `1e3`: 1000, `null`: 0, `"x"`: 0, `true`: 0,
		`{}`: 0, `1e300`: maxUsageTokens, `-3`: -3, `""`: 0, ``: 0,
	} {
		if got := looseCount(json.RawMessage(in)); got != want {
			t.Errorf("looseCount(%s) = %d, want %d", in, got, want)
		}
	}
}
