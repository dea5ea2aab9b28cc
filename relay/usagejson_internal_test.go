package relay

import (
	"testing"

	json "github.com/goccy/go-json"
)

func TestReadLooseCount(t *testing.T) {
	for in, want := range map[string]int{
		`12`: 12, `12.0`: 12, `12.2`: 13, `"7"`: 7, `" 7 "`: 7, `"7.5"`: 8, `1e3`: 1000, `null`: 0, `"x"`: 0, `true`: 0,
		`{}`: 0, `1e300`: 0, `"Infinity"`: 0, `-3`: -3, `""`: 0, ``: 0,
	} {
		if got := readLooseCount(json.RawMessage(in)); got != want {
			t.Errorf("readLooseCount(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestLooseUsage(t *testing.T) {
	var v struct {
		Usage *looseUsage `json:"usage"`
	}
	in := `{"usage":{"prompt_tokens":12.0,"completion_tokens":"7","total_tokens":19,"prompt_tokens_details":"n/a","completion_tokens_details":{"audio_tokens":"3"}}}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	u := v.Usage.usage()
	if u.PromptTokens != 12 || u.CompletionTokens != 7 || u.TotalTokens != 19 || u.PromptTokensDetails != nil ||
		u.CompletionTokensDetails == nil || u.CompletionTokensDetails.AudioTokens != 3 {
		t.Fatalf("usage %+v", u)
	}
}
