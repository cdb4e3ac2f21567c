package fanout

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"

	"github.com/gorilla/mux"

	"github.com/fanout/fanout/internal/id"
)

// Reset puts the server back as New left it: every queue, topic and
// subscription is deleted, pending deliveries and retries are cancelled, the
// delivery records and the outbox are emptied, and the topology of
// Options.ConfigFile and Options.Topology is created again. Long polls in
// progress return no messages. The clock keeps its time. With a data dir,
// the reset is on disk before Reset returns, and the dir is compacted, so
// its disk use drops to what the topology holds.
//
// POST /_fanout/reset and moto's POST /moto-api/reset call it.
func (s *Server) Reset() error {
	all := s.ns.all()
	for _, ns := range all {
		ns.sns.Reset() // first, so no new delivery starts from an old subscription
	}
	s.deliveries.Reset()
	for _, ns := range all {
		ns.sqs.Reset()
	}
	for _, ns := range s.ns.dropOthers() {
		ns.sqs.Close()
	}
	err := s.loadTopology()
	s.compactStore("a reset") // the data dir holds what a restart brings back: nothing old
	return err
}

// ResetAccount deletes the queues, topics and subscriptions of one account,
// in every region, leaving the other accounts alone (a CI fleet sharing one
// fanout gives each job an account). Deliveries already under way finish.
// What the topology declares for that account (the root's for the default
// account, and its namespaces sections) is created again. With a data dir,
// the reset is on disk before ResetAccount returns; the space it frees is
// given back by the next compaction (not at once: that rewrites every
// other account's state too).
func (s *Server) ResetAccount(account string) error {
	var hit []*namespace
	for _, ns := range s.ns.all() {
		if ns.account == account {
			hit = append(hit, ns)
		}
	}
	for _, ns := range hit {
		ns.sns.Reset()
	}
	for _, ns := range hit {
		ns.sqs.Reset()
	}
	return s.loadTopologyOf(func(a, _ string) bool { return a == account })
}

// resetPaths are the reset endpoints: fanout's, and moto's for users coming
// from moto (LocalStack has no such endpoint for SQS and SNS).
var resetPaths = []string{"/_fanout/reset", "/moto-api/reset"}

func (s *Server) resetRoutes(r *mux.Router) {
	for _, p := range resetPaths {
		r.HandleFunc(p, s.serveReset).Methods(http.MethodPost)
	}
}

// routedOutside reports whether a path outside /_fanout/ has a route.
func routedOutside(path string) bool { return strings.HasPrefix(path, "/moto-api/") }

func (s *Server) serveReset(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if q := req.URL.Query(); len(q) == 1 && len(q["account"]) == 1 {
		if !id.IsAccount(q.Get("account")) {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "account must be 12 digits"})
			return
		}
		if err := s.ResetAccount(q.Get("account")); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "reset, then creating the topology again: " + err.Error()})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
		return
	} else if len(q) > 0 {
		names := make([]string, 0, len(q))
		for k := range q {
			names = append(names, k)
		}
		sort.Strings(names)
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "unknown parameter " + names[0] + ": a reset takes only account"})
		return
	}
	if err := s.Reset(); err != nil {
		w.WriteHeader(http.StatusBadRequest) // the topology file no longer applies: the user's to fix
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "reset, then creating the topology again: " + err.Error()})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "ok"})
}
