// Package admin serves what fanout adds beyond AWS, under /_fanout/: health,
// the clock, and views of the engines' state.
package admin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/fanout/fanout/clock"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/sns"
	"github.com/fanout/fanout/sqs"
)

// Version is fanout's version, reported by the health endpoint.
var Version = "0.1.0-dev"

// Deps is what the admin API reads.
type Deps struct {
	Started time.Time // on the wall clock: uptime is real time
	Clock   clock.Clock
	SQS     *sqs.Engine
	SNS     *sns.Engine
	// Spaces, when set, lists every namespace (account and region), the
	// default (SQS's and SNS's) first; without it SQS and SNS are the only one.
	Spaces func() []Space
	// SQSOf, when set, is the SQS engine of another account and region
	// (nil when none exists), for LocalStack's /_aws/sqs/messages.
	SQSOf func(account, region string) *sqs.Engine
	// Deliveries is the SNS delivery dispatcher: its records and counts.
	Deliveries *delivery.Dispatcher
	Pprof      bool // serve net/http/pprof under /_fanout/debug/pprof/
	// Settle, when set, waits for the work that moving the clock made due
	// (SNS deliveries run on workers), so POST /_fanout/clock answers after it.
	Settle func(context.Context) error
	// Pending, when set, counts the deliveries still queued or in progress
	// once moving the clock stopped waiting: the clock reply shows it.
	Pending func() int64
	// Advance, when set, moves the clock for POST /_fanout/clock instead
	// of the clock's own Advance (fanout stores the new offset first).
	Advance func(time.Duration) error
}

// settleLimit bounds how long moving the clock waits for that work: an
// endpoint that hangs must not hold the reply (it says what is pending).
const settleLimit = 2 * time.Second

// Routes adds the /_fanout/ endpoints to r.
func Routes(r *mux.Router, d Deps) {
	r.HandleFunc("/_fanout/health", d.health).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/_fanout/clock", d.getClock).Methods(http.MethodGet)
	r.HandleFunc("/_fanout/clock", d.advanceClock).Methods(http.MethodPost)
	r.HandleFunc("/_fanout/sqs/queues", d.queues).Methods(http.MethodGet)
	r.HandleFunc("/_fanout/sqs/queues/{name}/messages", d.peek).Methods(http.MethodGet)
	r.HandleFunc("/_fanout/clock/due", d.due).Methods(http.MethodGet)
	r.HandleFunc("/_fanout/graph", d.graph).Methods(http.MethodGet)
	r.HandleFunc("/_fanout/namespaces", d.serveNamespaces).Methods(http.MethodGet)
	r.HandleFunc("/_fanout/sqs/movetasks", d.moveTasks).Methods(http.MethodGet)
	r.HandleFunc("/_fanout/sns/topics", d.topics).Methods(http.MethodGet)
	d.actionRoutes(r)
	d.localstackRoutes(r)
	d.dashboardRoutes(r)
	if d.Pprof {
		r.HandleFunc("/_fanout/debug/pprof/cmdline", pprof.Cmdline)
		r.HandleFunc("/_fanout/debug/pprof/profile", pprof.Profile)
		r.HandleFunc("/_fanout/debug/pprof/symbol", pprof.Symbol)
		r.HandleFunc("/_fanout/debug/pprof/trace", pprof.Trace)
		r.HandleFunc("/_fanout/debug/runtime", runtimeStats).Methods(http.MethodGet)
		r.PathPrefix("/_fanout/debug/pprof/").HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// pprof.Index serves named profiles from the path after /debug/pprof/.
			r2 := r.Clone(r.Context())
			r2.URL.Path = strings.Replace(r.URL.Path, "/_fanout/debug/pprof/", "/debug/pprof/", 1)
			pprof.Index(w, r2)
		})
	}
}

func (d Deps) health(w http.ResponseWriter, _ *http.Request) {
	up := time.Since(d.Started)
	writeJSON(w, http.StatusOK, map[string]any{
		"status":        "ok",
		"version":       Version,
		"uptime":        up.Round(time.Millisecond).String(),
		"uptimeSeconds": up.Seconds(),
	})
}

type clockView struct {
	Now           string  `json:"now"`
	Offset        string  `json:"offset"`
	OffsetSeconds float64 `json:"offsetSeconds"`
	Mode          string  `json:"mode"`
	// Pending is set by POST: deliveries still queued or in progress.
	Pending *int64 `json:"pending,omitempty"`
}

func (d Deps) clockView() clockView {
	v := clockView{Now: d.Clock.Now().UTC().Format(time.RFC3339Nano), Offset: "0s", Mode: "fixed"}
	switch c := d.Clock.(type) {
	case *clock.Manual:
		v.Mode = "manual"
		v.Offset, v.OffsetSeconds = c.Offset().String(), c.Offset().Seconds()
	case *clock.Adjustable:
		v.Mode = "real"
		v.Offset, v.OffsetSeconds = c.Offset().String(), c.Offset().Seconds()
	}
	return v
}

func (d Deps) getClock(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, d.clockView())
}

// advanceClock moves fanout's time forward: {"advance":"36h"} (a Go
// duration). Everything that falls due runs, in order, before it answers.
func (d Deps) advanceClock(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Advance string `json:"advance"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "the body must be JSON like {\"advance\":\"36h\"}")
		return
	}
	dur, err := time.ParseDuration(body.Advance)
	if err != nil || dur < 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("advance: %q is not a non-negative Go duration such as 90s, 36h or 1h30m", body.Advance))
		return
	}
	adv, ok := d.Clock.(clock.Advancer)
	if !ok {
		writeError(w, http.StatusConflict, "this server's clock cannot be moved")
		return
	}
	if to := adv.Now().Add(dur); to.After(clock.Latest()) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("advance: %s would take the clock to %s, past %s, the latest time fanout's clock can read (engines keep times as Unix nanoseconds)",
			body.Advance, to.UTC().Format(time.RFC3339), clock.Latest().Format(time.RFC3339)))
		return
	}
	if d.Advance != nil {
		if err := d.Advance(dur); err != nil {
			writeError(w, http.StatusInternalServerError, "the clock's new offset could not be stored, so it did not move: "+err.Error())
			return
		}
	} else {
		adv.Advance(dur)
	}
	if d.Settle != nil {
		ctx, cancel := context.WithTimeout(r.Context(), settleLimit)
		_ = d.Settle(ctx)
		cancel()
	}
	v := d.clockView()
	if d.Pending != nil {
		n := d.Pending()
		v.Pending = &n
	}
	writeJSON(w, http.StatusOK, v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
