package fanout

import (
	"testing"

	"github.com/fanout/fanout/internal/admin"
)

// Every line GET /_fanout/api could show names a route that exists: with
// every optional route on, no summary is left over.
func TestEverySummaryHasARoute(t *testing.T) {
	s, err := New(Options{Pprof: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.closeEngines()
	if left := admin.Unrouted(s.router); len(left) > 0 {
		t.Errorf("summaries with no route (remove them from internal/admin/namespace.go): %q", left)
	}
}
