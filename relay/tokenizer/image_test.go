package tokenizer

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
)

func TestImageTokens(t *testing.T) {
	scenarios := []struct {
		w, h   int
		detail string
		model  string
		want   int
	}{
		{1024, 1024, "low", "gpt-4o", 85},
		{4096, 4096, "low", "gpt-4o", 85},
		{1024, 1024, "high", "gpt-4o", 765}, // 768×768: 2×2 tiles
		{1024, 1024, "", "gpt-4o", 765},     // no detail means high
		{1024, 1024, "auto", "gpt-4-turbo", 765},
		{2048, 4096, "high", "gpt-4o", 1105}, // 1024×2048 → 768×1536: 2×3 tiles
		{4096, 2048, "high", "gpt-4o", 1105},
		{512, 512, "high", "gpt-4o", 255}, // one tile
		{513, 512, "high", "gpt-4o", 425}, // two tiles
		{100, 100, "high", "gpt-4o", 255},
		{768, 768, "high", "gpt-4o", 765},   // not scaled
		{10000, 100, "high", "gpt-4o", 765}, // 2048×20: 4×1 tiles
		{0, 0, "high", "gpt-4o", 85},
		{1024, 1024, "high", "gpt-4o-mini", 4*5667 + 2833},
		{2048, 4096, "high", "gpt-4o-mini-2024-07-18", 6*5667 + 2833},
		{1024, 1024, "low", "gpt-4o-mini", 2833},
	}
	for _, s := range scenarios {
		if got := ImageTokens(s.w, s.h, s.detail, s.model); got != s.want {
			t.Errorf("ImageTokens(%d, %d, %q, %q) = %d, want %d", s.w, s.h, s.detail, s.model, got, s.want)
		}
	}
}

func encodePNG(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeGIF(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// webp builds the first chunk of a WebP file of the given kind and size.
func webp(kind string, w, h int) []byte {
	var p []byte
	switch kind {
	case "VP8 ":
		p = []byte{0, 0, 0, 0x9d, 0x01, 0x2a, 0, 0, 0, 0}
		binary.LittleEndian.PutUint16(p[6:], uint16(w))
		binary.LittleEndian.PutUint16(p[8:], uint16(h))
	case "VP8L":
		p = []byte{0x2f, 0, 0, 0, 0}
		binary.LittleEndian.PutUint32(p[1:], uint32(w-1)|uint32(h-1)<<14)
	case "VP8X":
		p = make([]byte, 10)
		w, h = w-1, h-1
		p[4], p[5], p[6] = byte(w), byte(w>>8), byte(w>>16)
		p[7], p[8], p[9] = byte(h), byte(h>>8), byte(h>>16)
	}
	b := []byte("RIFF\x00\x00\x00\x00WEBP" + kind + "\x00\x00\x00\x00")
	binary.LittleEndian.PutUint32(b[4:], uint32(len(p)+12))
	binary.LittleEndian.PutUint32(b[16:], uint32(len(p)))
	return append(b, p...)
}

func TestImageSize(t *testing.T) {
	scenarios := []struct {
		name string
		data []byte
		w, h int
	}{
		{"png", encodePNG(t, 1024, 768), 1024, 768},
		{"jpeg", encodeJPEG(t, 600, 400), 600, 400},
		{"gif", encodeGIF(t, 300, 200), 300, 200},
		{"webp lossy", webp("VP8 ", 640, 480), 640, 480},
		{"webp lossless", webp("VP8L", 2000, 3000), 2000, 3000},
		{"webp extended", webp("VP8X", 5000, 70000), 5000, 70000},
	}
	for _, s := range scenarios {
		w, h, err := ImageSize(bytes.NewReader(s.data))
		if err != nil || w != s.w || h != s.h {
			t.Errorf("%s: ImageSize = %d×%d, %v; want %d×%d", s.name, w, h, err, s.w, s.h)
		}
	}
}

func TestImageSizeErrors(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":      nil,
		"text":       []byte("this is not an image at all"),
		"bad webp":   []byte("RIFF\x00\x00\x00\x00WEBPVP8 \x0a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
		"short webp": []byte("RIFF\x00\x00\x00\x00WEBP"),
	} {
		if _, _, err := ImageSize(bytes.NewReader(data)); !errors.Is(err, ErrNotImage) {
			t.Errorf("%s: err = %v, want ErrNotImage", name, err)
		}
	}
	// A PNG cut inside its header is an image with a broken header.
	if _, _, err := ImageSize(bytes.NewReader(encodePNG(t, 10, 10)[:20])); err == nil || errors.Is(err, ErrNotImage) {
		t.Errorf("truncated png: err = %v, want a header error", err)
	}
}

// errAfter reads data and then fails, to prove only the header is read.
type errAfter struct{ r *bytes.Reader }

func (e errAfter) Read(p []byte) (int, error) {
	n, _ := e.r.Read(p)
	if n == 0 {
		return 0, errors.New("read past the header")
	}
	return n, nil
}

func TestImageTokensFromBytes(t *testing.T) {
	pngData := encodePNG(t, 1024, 1024)
	if got, err := ImageTokensFromBytes(pngData, "high", "gpt-4o"); err != nil || got != 765 {
		t.Errorf("png: %d, %v; want 765", got, err)
	}
	if got, err := ImageTokensFromBytes(encodeJPEG(t, 512, 512), "", "gpt-4o-mini"); err != nil || got != 5667+2833 {
		t.Errorf("jpeg mini: %d, %v; want %d", got, err, 5667+2833)
	}
	if got, err := ImageTokensFromBytes(nil, "low", "gpt-4o"); err != nil || got != 85 {
		t.Errorf("low needs no image: %d, %v", got, err)
	}
	if _, err := ImageTokensFromBytes([]byte("nope"), "high", "gpt-4o"); !errors.Is(err, ErrNotImage) {
		t.Errorf("garbage: err = %v", err)
	}
	// PNG signature + IHDR chunk is 33 bytes: nothing after it is needed.
	got, err := ImageTokensFromReader(errAfter{bytes.NewReader(pngData[:33])}, "high", "gpt-4o")
	if err != nil || got != 765 {
		t.Errorf("header only: %d, %v; want 765", got, err)
	}
}

func TestDecodeDataURL(t *testing.T) {
	payload := []byte("hello, world?")
	std := base64.StdEncoding.EncodeToString(payload) // padded
	scenarios := []struct {
		name      string
		url       string
		mediaType string
		data      []byte
	}{
		{"padded", "data:image/png;base64," + std, "image/png", payload},
		{"unpadded", "data:image/png;base64," + base64.RawStdEncoding.EncodeToString(payload), "image/png", payload},
		{"url alphabet", "data:application/octet-stream;base64," + base64.URLEncoding.EncodeToString([]byte{0xfb, 0xff}), "application/octet-stream", []byte{0xfb, 0xff}},
		{"wrapped", "data:image/png;base64," + std[:8] + "\n" + std[8:], "image/png", payload},
		{"params", "data:text/plain;charset=utf-8;base64," + std, "text/plain", payload},
		{"upper scheme", "DATA:image/gif;base64," + std, "image/gif", payload},
		{"percent", "data:,hello%2C%20world%3F", "text/plain", []byte("hello, world?")},
	}
	for _, s := range scenarios {
		mt, data, err := DecodeDataURL(s.url)
		if err != nil || mt != s.mediaType || !bytes.Equal(data, s.data) {
			t.Errorf("%s: DecodeDataURL = %q, %q, %v; want %q, %q", s.name, mt, data, err, s.mediaType, s.data)
		}
	}
	for _, bad := range []string{"", "https://example.com/a.png", "data:image/png;base64", "data"} {
		if _, _, err := DecodeDataURL(bad); !errors.Is(err, ErrNotDataURL) {
			t.Errorf("%q: err = %v, want ErrNotDataURL", bad, err)
		}
	}
	if _, _, err := DecodeDataURL("data:image/png;base64,@@@@"); err == nil {
		t.Error("invalid base64: no error")
	}
}

func TestImageTokensFromDataURL(t *testing.T) {
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(encodePNG(t, 2048, 4096))
	if got, err := ImageTokensFromDataURL(url, "high", "gpt-4o"); err != nil || got != 1105 {
		t.Errorf("png 2048×4096: %d, %v; want 1105", got, err)
	}
	// Only the header has to be valid: a payload broken after it still counts.
	head := base64.StdEncoding.EncodeToString(encodePNG(t, 1024, 1024)[:33])
	if got, err := ImageTokensFromDataURL("data:image/png;base64,"+head+"!!!!", "", "gpt-4o"); err != nil || got != 765 {
		t.Errorf("header only: %d, %v; want 765", got, err)
	}
	if _, err := ImageTokensFromDataURL("https://example.com/a.png", "high", "gpt-4o"); !errors.Is(err, ErrNotDataURL) {
		t.Errorf("remote URL: err = %v, want ErrNotDataURL", err)
	}
}
