package tokenizer

import (
	"bytes"
	"fmt"
	"io"
)

// This file is compiled only with the package's tests.

// CountChat returns the prompt tokens of a chat request with the zero
// Counter, that is without reading images. It never fails.
func CountChat(model string, messages []Message, tools []Tool) int {
	n, _ := Counter{}.CountChat(model, messages, tools)
	return n
}

// CountInput is CountInput of the zero Counter.
func CountInput(model string, input any) int {
	return Counter{}.CountInput(model, input)
}

// ImageTokensFromBytes is ImageTokens for an encoded PNG, JPEG, GIF or WebP
// image. Only the header is decoded.
func ImageTokensFromBytes(data []byte, detail, model string) (int, error) {
	return ImageTokensFromReader(bytes.NewReader(data), detail, model)
}

// DecodeDataURL decodes a data: URL ("data:[<media type>][;base64],<data>")
// into its media type and payload. Base64 payloads may be padded or not;
// other payloads are percent-decoded.
func DecodeDataURL(dataURL string) (mediaType string, data []byte, err error) {
	mediaType, r, err := openDataURL(dataURL)
	if err != nil {
		return "", nil, err
	}
	data, err = io.ReadAll(r)
	if err != nil {
		return "", nil, fmt.Errorf("tokenizer: data: URL payload: %w", err)
	}
	return mediaType, data, nil
}
