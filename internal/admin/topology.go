package admin

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/fanout/fanout/topology"
)

// TopologyRoutes serves topology as code: GET /_fanout/topology exports the
// running server's queues, topics and subscriptions, every namespace's
// (?account= and ?region= pick some; YAML, or JSON with ?format=json or
// Accept: application/json), POST applies a file (with
// ?prune=true and ?dryRun=true), and /_fanout/topology/schema.json is the
// format's JSON Schema.
func TopologyRoutes(r *mux.Router, e topology.Engines) {
	r.HandleFunc("/_fanout/topology", func(w http.ResponseWriter, req *http.Request) { exportTopology(w, req, e) }).Methods(http.MethodGet)
	r.HandleFunc("/_fanout/topology", func(w http.ResponseWriter, req *http.Request) { applyTopology(w, req, e) }).Methods(http.MethodPost)
	r.HandleFunc("/_fanout/topology/schema.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/schema+json")
		_, _ = w.Write(topology.Schema)
	}).Methods(http.MethodGet)
}

func exportTopology(w http.ResponseWriter, req *http.Request, e topology.Engines) {
	f, err := readFilter(req.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	t, err := topology.Export(e)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if f.any() {
		t = t.Select(topology.Options{Account: e.SQS.Account(), Region: e.SQS.Region()}, func(account, region string) bool {
			return f.keeps(Space{Account: account, Region: region})
		})
	}
	asJSON := req.URL.Query().Get("format") == "json"
	if mt, _, _ := mime.ParseMediaType(req.Header.Get("Accept")); mt == "application/json" {
		asJSON = true
	}
	var body []byte
	if asJSON {
		body, err = t.JSON()
		w.Header().Set("Content-Type", "application/json")
	} else {
		body, err = t.YAML()
		w.Header().Set("Content-Type", "application/yaml")
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	_, _ = w.Write(body)
}

// topologyTypes are the media types a file may be posted as. Each needs a
// CORS preflight, which fanout never answers, so no web page can post one.
var topologyTypes = map[string]bool{
	"application/yaml": true, "application/x-yaml": true, "text/yaml": true, "text/x-yaml": true, "application/json": true,
}

type topologyErrors struct {
	Errors []topologyError `json:"errors"`
}

type topologyError struct {
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
	Text    string `json:"text"` // the whole error as one line
}

func applyTopology(w http.ResponseWriter, req *http.Request, e topology.Engines) {
	mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if !topologyTypes[mt] {
		writeError(w, http.StatusUnsupportedMediaType, "post the file as application/yaml or application/json")
		return
	}
	if o := req.Header.Get("Origin"); o != "" {
		if u, err := url.Parse(o); err != nil || u.Host != req.Host {
			writeError(w, http.StatusForbidden, "cross-origin requests may not change fanout")
			return
		}
	}
	flag := func(name string) bool {
		b, _ := strconv.ParseBool(req.URL.Query().Get(name))
		return b
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, req.Body, topology.MaxFileSize))
	if err != nil {
		writeError(w, http.StatusRequestEntityTooLarge, "a topology file may have at most "+strconv.Itoa(topology.MaxFileSize)+" bytes")
		return
	}
	t, err := topology.Parse(data, "")
	var report *topology.Report
	if err == nil {
		report, err = topology.Apply(t, e, topology.ApplyOptions{Prune: flag("prune"), DryRun: flag("dryRun")})
	}
	var errs topology.Errors
	if errors.As(err, &errs) {
		out := topologyErrors{Errors: []topologyError{}}
		for _, x := range errs {
			out.Errors = append(out.Errors, topologyError{Line: x.Line, Column: x.Column, Path: x.Path, Message: x.Message, Text: x.Error()})
		}
		writeJSON(w, http.StatusBadRequest, out)
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, report)
}
