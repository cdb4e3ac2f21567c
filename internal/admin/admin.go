// Package admin serves what fanout adds beyond AWS, under /_fanout/.
package admin

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gorilla/mux"
)

// Version is fanout's version, reported by the health endpoint.
var Version = "0.1.0-dev"

// Routes adds the /_fanout/ endpoints to r. started is when the server
// started, on the wall clock (uptime is real time, not the emulated clock).
func Routes(r *mux.Router, started time.Time) {
	r.HandleFunc("/_fanout/health", func(w http.ResponseWriter, _ *http.Request) {
		up := time.Since(started)
		writeJSON(w, http.StatusOK, map[string]any{
			"status":        "ok",
			"version":       Version,
			"uptime":        up.Round(time.Millisecond).String(),
			"uptimeSeconds": up.Seconds(),
		})
	}).Methods(http.MethodGet, http.MethodHead)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
