package relay

import (
	"strings"
	"testing"
)

// A member spelled with other letter case than a name the relay reads is
// found where the relay reads names, and only there.
func TestCaseVariant(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
	}{
		{"Exact", `{"model":"m","messages":[{"role":"user","content":"hi"}],"n":2}`, ""},
		{"TopLevel", `{"model":"cheap","input":"hi","Model":"pricey"}`, "Model"},
		{"Alone", `{"Model":"pricey","input":"hi"}`, "Model"},
		{"ImageCount", `{"model":"dall-e-3","prompt":"a cat","N":4}`, "N"},
		{"StreamOptions", `{"model":"m","stream":true,"Stream_Options":{"include_usage":false}}`, "Stream_Options"},
		{"MessageMember", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","Content":"b"}]}`, "Content"},
		{"ContentPart", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","Text":"b"}]}]}`, "Text"},
		{"InputPart", `{"model":"omni-moderation-latest","input":[{"type":"text","TEXT":"b"}]}`, "TEXT"},
		// Names the relay does not read, and names inside a tool's schema or
		// another member's value, are the client's to choose.
		{"UnknownMember", `{"model":"m","Temperature":1,"messages":[]}`, ""},
		{"ToolSchema", `{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"Model":{"type":"string"},"N":{"type":"integer"}}}}}]}`, ""},
		{"NestedValue", `{"model":"m","metadata":{"Model":"x"},"messages":[{"role":"user","content":"hi","extra":{"Content":1}}]}`, ""},
		{"NotAnObject", `["Model"]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := caseVariant([]byte(tc.body)); got != tc.want {
				t.Fatalf("caseVariant = %q, want %q", got, tc.want)
			}
		})
	}
}

// A large body (an image in base64) is read in place.
func TestCaseVariantLargeBody(t *testing.T) {
	image := strings.Repeat("A", 4<<20)
	for _, tc := range []struct{ body, want string }{
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + image + `"}},{"type":"text","Text":"x"}]}]}`, "Text"},
		{`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + image + `"}}]}]}`, ""},
	} {
		if got, _ := caseVariant([]byte(tc.body)); got != tc.want {
			t.Fatalf("caseVariant = %q, want %q", got, tc.want)
		}
	}
}

func BenchmarkCaseVariantLarge(b *testing.B) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + strings.Repeat("A", 4<<20) + `"}}]}]}`)
	b.ReportAllocs()
	for b.Loop() {
		caseVariant(body)
	}
}

func BenchmarkCaseVariant(b *testing.B) {
	body := []byte(`{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Write a haiku about the sea and the Moon, in English."}]}`)
	for b.Loop() {
		caseVariant(body)
	}
}
