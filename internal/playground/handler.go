package playground

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/fanout/fanout/filter"
)

// Paths served by Routes.
const (
	TestPath = "/_fanout/filter/test"
	PagePath = "/_fanout/playground"
)

// maxRequest bounds a test request: a policy and a message may each be
// 256 KB on SNS, plus attributes and JSON escaping.
const maxRequest = 2 << 20

// Routes adds the playground's endpoint and page to r. Register it before
// any catch-all route.
func Routes(r *mux.Router) {
	r.HandleFunc(TestPath, test).Methods(http.MethodPost)
	r.HandleFunc(PagePath, page).Methods(http.MethodGet, http.MethodHead)
	// The page's relative links need the path without a trailing slash.
	r.Handle(PagePath+"/", http.RedirectHandler(PagePath, http.StatusMovedPermanently)).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc(PagePath+"/examples.json", examples).Methods(http.MethodGet, http.MethodHead)
	r.PathPrefix(PagePath+"/").Handler(http.StripPrefix(PagePath+"/", assets())).Methods(http.MethodGet, http.MethodHead)
}

// testRequest is the body of POST /_fanout/filter/test.
type testRequest struct {
	Policy     *string         `json:"policy"`
	Scope      string          `json:"scope"`
	Message    string          `json:"message"`
	Attributes json.RawMessage `json:"attributes"`
}

// test answers 200 with a Result whenever the request is well formed, even
// for an invalid policy: validation is part of what is being tested.
func test(w http.ResponseWriter, r *http.Request) {
	var req testRequest
	body := http.MaxBytesReader(w, r.Body, maxRequest)
	if err := strictDecode(body, &req); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", maxRequest))
			return
		}
		writeError(w, http.StatusBadRequest, "the body must be JSON like {\"policy\":\"...\",\"scope\":\"MessageAttributes\",\"message\":\"...\",\"attributes\":{...}}: "+err.Error())
		return
	}
	if req.Policy == nil {
		writeError(w, http.StatusBadRequest, `"policy" is missing (send "" to test an empty policy)`)
		return
	}
	attrs, err := ParseAttributes(req.Attributes)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	res := Evaluate(*req.Policy, filter.Scope(req.Scope), filter.Message{Body: req.Message, Attributes: attrs})
	writeJSON(w, http.StatusOK, res)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
