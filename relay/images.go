package relay

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"gateway/relay/tokenizer"
)

// imageTokens counts an image part of a chat request by its size: a data:
// URL is decoded, an http(s) URL is fetched through the guarded client,
// reading only as much as the image header needs.
func (rl *Relay) imageTokens(c *call, url, detail string) (int, error) {
	if strings.HasPrefix(url, "data:") {
		return tokenizer.ImageTokensFromDataURL(url, detail, c.model)
	}
	ctx, cancel := context.WithTimeout(c.r.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := rl.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("image download: %s", resp.Status)
	}
	return tokenizer.ImageTokensFromReader(http.MaxBytesReader(nil, resp.Body, 20<<20), detail, c.model)
}
