// Package ui holds the built console. `make ui` builds it into dist/, which
// the binary embeds; without a build dist/ holds only .gitkeep and the server
// answers console pages with a short notice.
package ui

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// FS returns the built console with the dist/ prefix removed.
func FS() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err)
	}
	return sub
}
