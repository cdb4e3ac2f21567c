package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/id"
	"github.com/fanout/fanout/sns"
)

// Certificates is where the signing certificate comes from.
type Certificates interface {
	CertPEM() ([]byte, error)
	CertFile() (string, error)
}

// Deliveries is what the admin endpoints read of the delivery dispatcher.
type Deliveries interface {
	Stats() delivery.Stats
	Records(delivery.Query) []delivery.Record
	Outbox(delivery.OutboxQuery) []delivery.OutboxEntry
}

// Routes adds what SNS messages link to, and fanout's SNS extras, under
// delivery.PathPrefix (/_fanout/sns/), and the delivery log:
//
//	GET  /_fanout/sns/SimpleNotificationService-<hex>.pem   the SigningCertURL
//	GET  /_fanout/sns/?Action=Unsubscribe&SubscriptionArn=…  the UnsubscribeURL
//	GET  /_fanout/sns/?Action=ConfirmSubscription&TopicArn=…&Token=…
//	GET  /_fanout/sns/deliveries   delivery counts and recent failures (JSON)
//	GET  /_fanout/sns/pending      subscriptions waiting for confirmation, with tokens (JSON)
//	GET  /_fanout/sns/outbox       what email, sms, push and firehose endpoints received
//	GET  /_fanout/deliveries       each delivery with its attempts, newest first
func Routes(r *mux.Router, h *Handler, certs Certificates, d Deliveries) {
	p := delivery.PathPrefix
	r.HandleFunc(p, h.serveLink).Methods(http.MethodGet, http.MethodPost)
	r.HandleFunc(p+"deliveries", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, d.Stats())
	}).Methods(http.MethodGet)
	r.HandleFunc(p+"outbox", func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		writeJSON(w, map[string][]delivery.OutboxEntry{"messages": d.Outbox(delivery.OutboxQuery{
			Protocol: q.Get("protocol"), Endpoint: q.Get("endpoint"), Limit: limitParam(q.Get("limit")),
		})})
	}).Methods(http.MethodGet)
	r.HandleFunc("/_fanout/deliveries", func(w http.ResponseWriter, req *http.Request) {
		q := req.URL.Query()
		writeJSON(w, map[string][]delivery.Record{"deliveries": d.Records(delivery.Query{
			SubscriptionArn: q.Get("subscription"), TopicArn: q.Get("topic"), Status: q.Get("status"), Type: q.Get("type"),
			MessageID: q.Get("message"), Limit: limitParam(q.Get("limit")),
		})})
	}).Methods(http.MethodGet)
	r.HandleFunc(p+"pending", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string][]sns.PendingSubscription{"pending": h.engine.PendingSubscriptions()})
	}).Methods(http.MethodGet)
	r.HandleFunc(p+"{file:SimpleNotificationService-[0-9a-f]+\\.pem}", func(w http.ResponseWriter, req *http.Request) {
		name, err := certs.CertFile()
		if err != nil || name != mux.Vars(req)["file"] {
			http.NotFound(w, req)
			return
		}
		pem, _ := certs.CertPEM()
		w.Header().Set("Content-Type", "application/x-x509-ca-cert")
		_, _ = w.Write(pem)
	}).Methods(http.MethodGet)
}

// linkActions are the calls SNS's own links make: anyone holding the URL
// may use them, signed or not.
var linkActions = map[string]bool{"Unsubscribe": true, "ConfirmSubscription": true}

func (h *Handler) serveLink(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || !linkActions[r.Form.Get("Action")] {
		writeError(w, id.UUID(), sns.ErrInvalidAction.New("The action %s is not valid for this endpoint.", r.Form.Get("Action")))
		return
	}
	h.ServeQuery(w, r, r.Form)
}

func limitParam(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
