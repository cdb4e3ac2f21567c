package cors

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestAllowed(t *testing.T) {
	t.Parallel()
	def := New(nil)
	req := httptest.NewRequest("GET", "http://127.0.0.1:4566/", nil)
	for origin, want := range map[string]bool{
		"http://localhost:3000": true, "http://127.0.0.1:8080": true, "http://[::1]:5173": true, "https://localhost:8443": true,
		"http://127.0.0.1:4566": true, // fanout's own pages
		"http://localhost":      true,
		"https://evil.example":  false, "http://localhost.evil.example:3000": false, "http://localhost:3000x": false,
		"null": false, "http://127.0.0.1.evil.example": false,
	} {
		if got := def.Allowed(origin, req); got != want {
			t.Errorf("default, %s: %v", origin, got)
		}
	}
	named := New([]string{"https://app.example", "http://dev.example:*"})
	if !named.Allowed("https://app.example", req) || !named.Allowed("http://dev.example:9000", req) || named.Allowed("http://localhost:3000", req) || named.Allowed("https://app.example:444", req) {
		t.Error("named origins")
	}
	if !New([]string{"*"}).Allowed("https://anything.example", req) {
		t.Error("*")
	}
}

// TestWrap: preflights of an allowed origin are answered the same on every
// path, known or not; other origins get no CORS header and their requests
// never reach the handler.
func TestWrap(t *testing.T) {
	t.Parallel()
	reached := 0
	h := New(nil).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		if r.URL.Path == "/known" {
			w.Header().Set("X-Route", "known")
		}
		w.WriteHeader(200)
	}), func(w http.ResponseWriter, r *http.Request, origin string) { w.WriteHeader(403) })
	preflight := func(path, origin string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("OPTIONS", "http://127.0.0.1:4566"+path, nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Method", "POST")
		r.Header.Set("Access-Control-Request-Headers", "authorization, x-amz-target, x-amz-date, x-amz-user-agent, amz-sdk-invocation-id, amz-sdk-request, content-type, x-amzn-query-mode, cookie")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	known, unknown := preflight("/known", "http://localhost:3000"), preflight("/_fanout/no/such/path", "http://localhost:3000")
	if known.Code != 204 || known.Header().Get("Access-Control-Allow-Origin") != "http://localhost:3000" ||
		known.Header().Get("Access-Control-Allow-Headers") != "authorization, x-amz-target, x-amz-date, x-amz-user-agent, amz-sdk-invocation-id, amz-sdk-request, content-type, x-amzn-query-mode" {
		t.Fatalf("allowed preflight: %d %v", known.Code, known.Header())
	}
	if len(known.Header()) != len(unknown.Header()) || known.Code != unknown.Code || unknown.Body.Len() != 0 {
		t.Fatalf("preflights differ by path: %v / %v", known.Header(), unknown.Header())
	}
	for k := range known.Header() {
		if known.Header().Get(k) != unknown.Header().Get(k) {
			t.Fatalf("preflights differ in %s", k)
		}
	}
	evil := preflight("/known", "https://evil.example")
	if evil.Code != 403 || evil.Header().Get("Access-Control-Allow-Origin") != "" || evil.Header().Get("Access-Control-Allow-Headers") != "" {
		t.Fatalf("disallowed preflight: %d %v", evil.Code, evil.Header())
	}
	if reached != 0 {
		t.Fatal("a preflight reached the handler")
	}
	// A simple request (a form POST needs no preflight) from another origin.
	r := httptest.NewRequest("POST", "http://127.0.0.1:4566/known", nil)
	r.Header.Set("Origin", "https://evil.example")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 403 || reached != 0 {
		t.Fatalf("simple request from another origin: %d, reached %d", w.Code, reached)
	}
	// From an allowed origin it is served, with the headers an SDK reads exposed.
	r.Header.Set("Origin", "http://127.0.0.1:3000")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 || reached != 1 || w.Header().Get("Access-Control-Allow-Origin") != "http://127.0.0.1:3000" || w.Header().Get("Access-Control-Expose-Headers") == "" {
		t.Fatalf("allowed origin: %d %v", w.Code, w.Header())
	}
	// No Origin: not a browser's cross-origin request; served as is.
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "http://127.0.0.1:4566/known", nil))
	if w.Code != 200 || reached != 2 || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("no Origin: %d %v", w.Code, w.Header())
	}
}
