package playground

import (
	"embed"
	"io/fs"
	"net/http"
)

// static holds the page: plain HTML, CSS and JavaScript, no build step and
// nothing loaded from elsewhere, so it works offline and in CI.
//
//go:embed static
var static embed.FS

func staticFS() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}

// page serves the playground's HTML at PagePath.
func page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'")
	http.ServeFileFS(w, r, staticFS(), "index.html")
}

// assets serves the page's CSS and JavaScript.
func assets() http.Handler {
	return http.FileServerFS(staticFS())
}
