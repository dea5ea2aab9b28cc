package relay

import (
	"bytes"
	"encoding/base64"
	"errors"
	"image"
	"image/png"
	"testing"
)

// Of one request's data: URL images, only the first maxImageDecodes are
// read; the others are left to the default count, whatever their number.
func TestImageDecodesBounded(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 64, 64))); err != nil {
		t.Fatal(err)
	}
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	rl := &Relay{}
	c := &call{model: "gpt-4o"}
	for i := range maxImageDecodes + 5 {
		n, err := rl.imageTokens(c, url, "high")
		if i < maxImageDecodes && (err != nil || n <= 0) {
			t.Fatalf("image %d: %d, %v; want it read", i, n, err)
		}
		if i >= maxImageDecodes && !errors.Is(err, errImageBudget) {
			t.Fatalf("image %d: %d, %v; want it past the budget", i, n, err)
		}
	}
}

// A data: URL is read whatever the case of its scheme (RFC 2397), not
// fetched as an address and counted as the default.
func TestImageDataURLSchemeCase(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 64, 64))); err != nil {
		t.Fatal(err)
	}
	payload := "image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	rl := &Relay{}
	want, err := rl.imageTokens(&call{model: "gpt-4o"}, "data:"+payload, "high")
	if err != nil {
		t.Fatal(err)
	}
	for _, scheme := range []string{"DATA:", "Data:"} {
		c := &call{model: "gpt-4o"}
		if n, err := rl.imageTokens(c, scheme+payload, "high"); err != nil || n != want || c.imageFetches != 0 {
			t.Errorf("%s: %d, %v, %d fetches; want %d read from the URL", scheme, n, err, c.imageFetches, want)
		}
	}
}
