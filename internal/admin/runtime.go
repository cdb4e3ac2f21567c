package admin

import (
	"net/http"
	"runtime/metrics"
)

// runtimeMetrics are the runtime/metrics samples GET /_fanout/debug/runtime
// reports (with --pprof), so a load tool can tell the collector's share of
// fanout's CPU and the heap it marks.
var runtimeMetrics = []string{
	"/cpu/classes/gc/total:cpu-seconds",
	"/cpu/classes/idle:cpu-seconds",
	"/cpu/classes/total:cpu-seconds",
	"/gc/cycles/total:gc-cycles",
	"/gc/heap/live:bytes",
	"/memory/classes/total:bytes",
	"/sched/goroutines:goroutines",
}

// runtimeStats answers the current values, by metric name. The CPU classes
// are the runtime's estimates, brought up to date at each collection.
func runtimeStats(w http.ResponseWriter, _ *http.Request) {
	samples := make([]metrics.Sample, len(runtimeMetrics))
	for i, name := range runtimeMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	out := make(map[string]float64, len(samples))
	for _, s := range samples {
		switch s.Value.Kind() {
		case metrics.KindFloat64:
			out[s.Name] = s.Value.Float64()
		case metrics.KindUint64:
			out[s.Name] = float64(s.Value.Uint64())
		}
	}
	writeJSON(w, http.StatusOK, out)
}
