package relay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"gateway/egress"
	"gateway/relay/tokenizer"
)

// imageSizes are the sizes OpenAI's image models accept (S §5.8); other
// models' sizes are left to their provider.
var imageSizes = map[string][]string{
	"dall-e-2": {"256x256", "512x512", "1024x1024"},
	"dall-e-3": {"1024x1024", "1024x1792", "1792x1024"},
}

// checkImageSize defaults an empty size to 1024x1024 and refuses a size the
// model does not make, and a "×" written for "x".
func checkImageSize(model string, size *string) *Error {
	if *size == "" {
		*size = "1024x1024"
	}
	if strings.Contains(*size, "×") {
		return badRequest("图片尺寸 " + *size + " 无效：请用小写字母 x 分隔宽和高")
	}
	if allowed, ok := imageSizes[model]; ok && !slices.Contains(allowed, *size) {
		return badRequest("模型 " + model + " 不支持图片尺寸 " + *size + "，可选：" + strings.Join(allowed, ", "))
	}
	return nil
}

// A request's remote images are downloaded (for their size) at most
// maxImageFetches at a time of at most 5 s each, within imageFetchBudget in
// all; an image past either bound counts as tokenizer.DefaultImageTokens.
// Of its data: URL images, at most maxImageDecodes are read (their
// headers), so that a request of thousands of them costs no more; the rest
// count as the default too.
const (
	maxImageFetches  = 8
	imageFetchBudget = 10 * time.Second
	maxImageDecodes  = 64
)

var errImageBudget = errors.New("image download budget of the request spent")

// imageTokens counts an image part of a chat request by its size: a data:
// URL is decoded, an http(s) URL is fetched through the guarded client as a
// user's URL (public addresses only, whatever the administrator allows for
// channels), reading only as much as the image header needs.
func (rl *Relay) imageTokens(c *call, url, detail string) (int, error) {
	if len(url) >= 5 && strings.EqualFold(url[:5], "data:") {
		// The scheme is case-insensitive (RFC 2397): DATA: is no address
		// to fetch.
		if c.imageDecodes >= maxImageDecodes {
			return 0, errImageBudget
		}
		c.imageDecodes++
		return tokenizer.ImageTokensFromDataURL(url, detail, c.model)
	}
	now := time.Now()
	if c.imageFetches == 0 {
		c.imageDeadline = now.Add(imageFetchBudget)
	}
	if c.imageFetches >= maxImageFetches || !now.Before(c.imageDeadline) {
		return 0, errImageBudget
	}
	c.imageFetches++
	deadline := now.Add(5 * time.Second)
	if c.imageDeadline.Before(deadline) {
		deadline = c.imageDeadline
	}
	ctx, cancel := context.WithDeadline(egress.PublicOnly(c.r.Context()), deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	// The host is the user's choice: the connection ends with the download
	// instead of waiting in the pool, where a request naming eight new hosts
	// would leave eight open files each for the idle timeout; so does the
	// connection to every host a redirect leads to.
	req.Close = true
	client := *rl.client
	client.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		next.Close = true
		if rl.client.CheckRedirect != nil {
			return rl.client.CheckRedirect(next, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("image download: %s", resp.Status)
	}
	return tokenizer.ImageTokensFromReader(http.MaxBytesReader(nil, resp.Body, 20<<20), detail, c.model)
}
