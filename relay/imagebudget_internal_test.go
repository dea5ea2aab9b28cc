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
