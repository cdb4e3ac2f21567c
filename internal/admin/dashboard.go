package admin

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/gorilla/mux"
)

// static is the dashboard: plain HTML, CSS and JavaScript with no build
// step and nothing loaded from elsewhere, so it works with no network.
//
//go:embed static
var static embed.FS

// pagePolicy keeps the page to its own scripts and this server: data shown
// on it can never run as code, and it can call nothing else.
const pagePolicy = "default-src 'self'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'"

func (d Deps) dashboardRoutes(r *mux.Router) {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // embedded above
	}
	r.Handle("/_fanout", http.RedirectHandler("/_fanout/", http.StatusMovedPermanently)).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/_fanout/", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Security-Policy", pagePolicy)
		w.Header().Set("Cache-Control", "no-store")
		http.ServeFileFS(w, req, sub, "index.html")
	}).Methods(http.MethodGet, http.MethodHead)
	files := http.StripPrefix("/_fanout/ui/", http.FileServerFS(sub))
	r.Handle("/_fanout/ui/{file}", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Security-Policy", pagePolicy)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, req)
	})).Methods(http.MethodGet, http.MethodHead)
}
