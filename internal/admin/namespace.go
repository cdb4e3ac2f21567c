package admin

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"

	"github.com/gorilla/mux"
)

// Endpoint is one admin route as GET /_fanout/api lists it.
type Endpoint struct {
	Method  string `json:"method"`
	Path    string `json:"path"`
	Summary string `json:"summary"`
}

// summaries describe every route under /_fanout/ (and the compatibility
// routes), keyed by "METHOD template", the first method of the route. The
// listing walks the router, so a route is listed as soon as it is added;
// TestEveryRouteHasASummary fails until its line is written here.
var summaries = map[string]string{
	"GET /_fanout/":                           "the dashboard: topology, queues, topics, deliveries, clock (HTML)",
	"GET /_fanout":                            "redirects to /_fanout/",
	"GET /_fanout/ui/{file}":                  "the dashboard's CSS and JavaScript",
	"GET /_fanout/api":                        "this list: every admin endpoint with a line each",
	"GET /_fanout/health":                     `{"status":"ok","version":…,"uptime":…}`,
	"GET /_fanout/clock":                      "fanout's time, its offset from the wall clock and the clock mode",
	"POST /_fanout/clock":                     `{"advance":"36h"}: move the clock forward and run everything that falls due, in order`,
	"GET /_fanout/clock/due":                  "what falls due next: retries, delayed messages, visibility timeouts (?limit=N, ?account=, ?region=)",
	"GET /_fanout/sqs/queues":                 "every queue of every namespace, with its account and region: visible, in flight, delayed, oldest message age, DLQ and redrive sources (?account=, ?region=, ?limit=N, ?next=)",
	"GET /_fanout/sqs/movetasks":              "every message move task (redrive) of every namespace's queues, with its queue's account and region, status and counts (?account=, ?region=)",
	"GET /_fanout/namespaces":                 "every (account, region) namespace with its number of queues, topics and subscriptions (?account=, ?region=)",
	"GET /_fanout/sqs/queues/{name}/messages": "peek without consuming: ?state=visible,inflight,delayed&limit=N (?account=&region= when the name is in several namespaces)",
	"POST /_fanout/sqs/queues/{name}/send":    `{"body":…,"attributes":{…},"delaySeconds":N}: SendMessage from the dashboard`,
	"POST /_fanout/sqs/queues/{name}/purge":   "PurgeQueue (its 60-second guard rail applies)",
	"POST /_fanout/sqs/queues/{name}/redrive": `{"destination":ARN (optional),"rate":N (optional)}: StartMessageMoveTask from this DLQ`,
	"GET /_fanout/sns/topics":                 "every topic of every namespace, with its account and region, and its subscriptions: protocol, endpoint, filter policy, raw, pending, DLQ and counts (?account=, ?region=)",
	"POST /_fanout/sns/topics/{name}/publish": `{"message":…,"subject":…,"attributes":{…}}: Publish from the dashboard`,
	"GET /_fanout/topology":                   "the running topology as a file (YAML; JSON with ?format=json or Accept: application/json)",
	"POST /_fanout/topology":                  "apply a topology file (?prune=true removes what it does not name, ?dryRun=true only reports)",
	"GET /_fanout/topology/schema.json":       "the topology file's JSON Schema",
	"POST /_fanout/reset":                     "back to new: every queue, topic, subscription and delivery record deleted, the start-up topology created again",
	"POST /moto-api/reset":                    "moto compatibility: the same as POST /_fanout/reset",
	"GET /_fanout/graph":                      "the topology as the dashboard draws it: topics, subscriptions, queues and endpoints, with counts along each edge; every namespace (?account=, ?region=)",
	"GET /_fanout/sns/":                       "the UnsubscribeURL and SubscribeURL of SNS messages (?Action=Unsubscribe|ConfirmSubscription&…)",
	"GET /_fanout/sns/deliveries":             "delivery counts per subscription and the last 100 failures (?account=, ?region=)",
	"GET /_fanout/sns/outbox":                 "what email, sms, push and firehose endpoints received (?protocol=&endpoint=&account=&region=&limit=)",
	"GET /_fanout/sns/pending":                "subscriptions waiting for confirmation, with their tokens",
	"GET /_fanout/sns/{file:SimpleNotificationService-[0-9a-f]+\\.pem}": "the SigningCertURL certificate",
	"GET /_fanout/deliveries":                           "each delivery with its attempts, newest first (?subscription=&topic=&status=&type=&message=&account=&region=&limit=)",
	"POST /_fanout/filter/test":                         `{"policy":…,"scope":…,"message":…,"attributes":{…}}: evaluate a filter policy, with the explanation per key`,
	"GET /_fanout/playground":                           "the filter policy playground (HTML); its inputs can come from the URL fragment",
	"GET /_fanout/playground/":                          "redirects to /_fanout/playground",
	"GET /_fanout/playground/examples.json":             "the playground's examples",
	"ANY /_fanout/debug/pprof/cmdline":                  "Go's profiler (with --pprof)",
	"ANY /_fanout/debug/pprof/profile":                  "Go's profiler (with --pprof)",
	"ANY /_fanout/debug/pprof/symbol":                   "Go's profiler (with --pprof)",
	"ANY /_fanout/debug/pprof/trace":                    "Go's profiler (with --pprof)",
	"ANY /_fanout/debug/pprof/":                         "Go's profiler (with --pprof)",
	"GET /_localstack/health":                           "LocalStack compatibility: the services fanout runs (sqs, sns) as \"running\"",
	"GET /_aws/sqs/messages":                            "LocalStack compatibility: peek at ?QueueUrl=… (ShowInvisible, ShowDelayed), JSON or XML",
	"GET /_aws/sqs/messages/{region}/{account}/{queue}": "LocalStack compatibility: the same, the queue named in the path",
	"GET /_aws/sns/subscription-tokens/{arn:.+}":        "LocalStack compatibility: the confirmation token of a pending subscription",
	"GET /_aws/sns/sms-messages":                        "LocalStack compatibility: SMS messages SNS sent, by phone number",
	"GET /_aws/sns/platform-endpoint-messages":          "LocalStack compatibility: push messages SNS sent, by endpoint ARN",
}

// Summarize adds summaries for routes registered outside this package.
// Call it before serving (it is not safe to call concurrently with requests).
func Summarize(m map[string]string) {
	for k, v := range m {
		summaries[k] = v
	}
}

// Namespace makes /_fanout/ (and the compatibility paths routed to r) its
// own namespace: an unknown path answers a JSON 404 listing the endpoints,
// a known path with another method a JSON 405 with Allow, and GET
// /_fanout/api lists every endpoint. Call it once; routes added later are
// listed too, since the listing walks the router on each request.
func Namespace(r *mux.Router) {
	r.HandleFunc("/_fanout/api", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"endpoints": Endpoints(r)})
	}).Methods(http.MethodGet, http.MethodHead)
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]any{
			"error":     fmt.Sprintf("no endpoint %s %s; GET /_fanout/api lists them", req.Method, req.URL.Path),
			"endpoints": Endpoints(r),
		})
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		allow := allowed(r, req.URL.Path)
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s does not answer %s; it answers %s", req.URL.Path, req.Method, strings.Join(allow, ", ")))
	})
}

// Endpoints lists the routes of r, each with its summary, sorted by path.
func Endpoints(r *mux.Router) []Endpoint {
	out := []Endpoint{}
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil || len(methods) == 0 {
			methods = []string{"ANY"}
		}
		out = append(out, Endpoint{Method: strings.Join(methods, ","), Path: tpl, Summary: summaries[methods[0]+" "+tpl]})
		return nil
	})
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Method < out[j].Method
	})
	return out
}

// Unrouted lists the summaries that name no route of r: a route removed
// or renamed without its line, which GET /_fanout/api would never show.
func Unrouted(r *mux.Router) []string {
	routed := map[string]bool{}
	for _, ep := range Endpoints(r) {
		routed[strings.SplitN(ep.Method, ",", 2)[0]+" "+ep.Path] = true
	}
	var out []string
	for k := range summaries {
		if !routed[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// allowed returns the methods of the routes whose path matches path.
func allowed(r *mux.Router, path string) []string {
	seen := map[string]bool{}
	var out []string
	_ = r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		re, err := route.GetPathRegexp()
		if err != nil {
			return nil
		}
		if ok, _ := regexp.MatchString(re, path); !ok {
			return nil
		}
		methods, _ := route.GetMethods()
		for _, m := range methods {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
		return nil
	})
	sort.Strings(out)
	return out
}
