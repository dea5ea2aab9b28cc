package tokenizer

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // registers GIF for image.DecodeConfig
	_ "image/jpeg" // registers JPEG for image.DecodeConfig
	_ "image/png"  // registers PNG for image.DecodeConfig
	"io"
	"net/url"
	"strings"
)

// ImageTokens returns the tokens OpenAI bills for a width×height image at
// the given detail for model:
//
//   - detail "low": the base cost only;
//   - otherwise the image is fitted into 2048×2048, then scaled down so that
//     its short side is at most 768 px, and costs the base plus a tile cost
//     per 512-px tile.
//
// Base and tile costs are 85 and 170, or 2833 and 5667 for gpt-4o-mini.
// A non-positive size costs the base only.
func ImageTokens(width, height int, detail, model string) int {
	base, tile := 85, 170
	if strings.HasPrefix(normalizeModel(model), "gpt-4o-mini") {
		base, tile = 2833, 5667
	}
	if detail == "low" || width <= 0 || height <= 0 {
		return base
	}
	w, h := int64(width), int64(height)
	if long := max(w, h); long > 2048 {
		w, h = w*2048/long, h*2048/long
	}
	if short := min(w, h); short > 768 {
		w, h = w*768/short, h*768/short
	}
	w, h = max(w, 1), max(h, 1)
	tiles := ((w + 511) / 512) * ((h + 511) / 512)
	return base + int(tiles)*tile
}

// ImageTokensFromReader is ImageTokens for an encoded PNG, JPEG, GIF or
// WebP image read from r. It reads only as far as the header, so r may be a
// response body of any size.
func ImageTokensFromReader(r io.Reader, detail, model string) (int, error) {
	if detail == "low" {
		return ImageTokens(1, 1, detail, model), nil
	}
	w, h, err := ImageSize(r)
	if err != nil {
		return 0, err
	}
	return ImageTokens(w, h, detail, model), nil
}

// ImageTokensFromDataURL is ImageTokens for an image in a data: URL. The
// payload is decoded as a stream, only as far as the image header.
func ImageTokensFromDataURL(dataURL, detail, model string) (int, error) {
	if detail == "low" {
		return ImageTokens(1, 1, detail, model), nil
	}
	_, r, err := openDataURL(dataURL)
	if err != nil {
		return 0, err
	}
	return ImageTokensFromReader(r, detail, model)
}

// ErrNotImage is returned when data is not a PNG, JPEG, GIF or WebP image.
var ErrNotImage = errors.New("tokenizer: not a PNG, JPEG, GIF or WebP image")

// ImageSize reads the width and height of a PNG, JPEG, GIF or WebP image
// from its header.
func ImageSize(r io.Reader) (width, height int, err error) {
	br := bufio.NewReaderSize(r, 4096)
	if head, _ := br.Peek(12); len(head) == 12 &&
		string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP" {
		return webpSize(br)
	}
	cfg, _, err := image.DecodeConfig(br)
	if err != nil {
		if errors.Is(err, image.ErrFormat) {
			return 0, 0, ErrNotImage
		}
		return 0, 0, fmt.Errorf("tokenizer: image header: %w", err)
	}
	return cfg.Width, cfg.Height, nil
}

// webpSize reads the canvas size from the first chunk of a WebP file. The
// standard library has no WebP decoder and the header is simple enough not
// to need one.
func webpSize(r io.Reader) (int, int, error) {
	var hdr [30]byte
	n, err := io.ReadFull(r, hdr[:])
	if err != nil && n < 20 {
		return 0, 0, ErrNotImage
	}
	p := hdr[20:n]
	switch string(hdr[12:16]) {
	case "VP8 ": // lossy: frame tag (3), start code 9d 01 2a, 14-bit sizes
		if len(p) >= 10 && p[3] == 0x9d && p[4] == 0x01 && p[5] == 0x2a {
			w := int(binary.LittleEndian.Uint16(p[6:8]) & 0x3fff)
			h := int(binary.LittleEndian.Uint16(p[8:10]) & 0x3fff)
			return w, h, nil
		}
	case "VP8L": // lossless: signature 0x2f, then 14-bit width-1, height-1
		if len(p) >= 5 && p[0] == 0x2f {
			b := binary.LittleEndian.Uint32(p[1:5])
			return int(b&0x3fff) + 1, int(b>>14&0x3fff) + 1, nil
		}
	case "VP8X": // extended: flags (4), 24-bit canvas width-1, height-1
		if len(p) >= 10 {
			w := int(p[4]) | int(p[5])<<8 | int(p[6])<<16
			h := int(p[7]) | int(p[8])<<8 | int(p[9])<<16
			return w + 1, h + 1, nil
		}
	}
	return 0, 0, ErrNotImage
}

// ErrNotDataURL is returned for a URL that is not a well-formed data: URL.
var ErrNotDataURL = errors.New("tokenizer: not a data: URL")

// openDataURL parses the header of a data: URL and returns a reader over its
// decoded payload, so that callers can stop reading early.
func openDataURL(dataURL string) (string, io.Reader, error) {
	if len(dataURL) < 5 || !strings.EqualFold(dataURL[:5], "data:") {
		return "", nil, ErrNotDataURL
	}
	meta, payload, ok := strings.Cut(dataURL[5:], ",")
	if !ok {
		return "", nil, ErrNotDataURL
	}
	isBase64 := false
	if m, found := strings.CutSuffix(meta, ";base64"); found {
		meta, isBase64 = m, true
	}
	mediaType, _, _ := strings.Cut(meta, ";")
	if mediaType == "" {
		mediaType = "text/plain"
	}
	if !isBase64 {
		s, err := url.PathUnescape(payload)
		if err != nil {
			return "", nil, fmt.Errorf("tokenizer: data: URL payload: %w", err)
		}
		return mediaType, strings.NewReader(s), nil
	}
	// Clients differ on padding; strip it and decode unpadded. Line breaks
	// (wrapped base64) are skipped by the decoder.
	payload = strings.TrimRight(payload, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(payload, "-_") {
		enc = base64.RawURLEncoding
	}
	return mediaType, base64.NewDecoder(enc, strings.NewReader(payload)), nil
}
