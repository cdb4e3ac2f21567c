package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/id"
	"github.com/fanout/fanout/sns"
	sqsapi "github.com/fanout/fanout/sqs/api"
)

// Certificates is where the signing certificate comes from.
type Certificates interface {
	CertPEM() ([]byte, error)
	CertFile() (string, error)
}

// Deliveries is what the admin endpoints read of the delivery dispatcher.
type Deliveries interface {
	Stats() delivery.Stats
	RecordPage(delivery.Query) delivery.Page
	Message(id string) (delivery.MessageView, bool)
	OutboxPage(delivery.OutboxQuery) delivery.OutboxPage
}

// Paging of the list endpoints: ?limit=N (default defaultLimit, at most
// maxLimit) and ?next=TOKEN, the "next" of the previous page.
const (
	defaultLimit = 100
	maxLimit     = 1000
)

// Routes adds what SNS messages link to, and fanout's SNS extras, under
// delivery.PathPrefix (/_fanout/sns/), and the delivery log:
//
//	GET  /_fanout/sns/SimpleNotificationService-<hex>.pem   the SigningCertURL
//	GET  /_fanout/sns/?Action=Unsubscribe&SubscriptionArn=…  the UnsubscribeURL
//	GET  /_fanout/sns/?Action=ConfirmSubscription&TopicArn=…&Token=…
//	GET  /_fanout/sns/deliveries   delivery counts per subscription and recent failures (JSON, paged)
//	GET  /_fanout/sns/pending      subscriptions waiting for confirmation, with tokens (JSON, paged; every namespace with WithAll)
//	GET  /_fanout/sns/outbox       what email, sms, push and firehose endpoints received (paged)
//	GET  /_fanout/deliveries       each delivery with its attempts, newest first (paged)
//
// Lists are streamed item by item, never built whole.
func Routes(r *mux.Router, h *Handler, certs Certificates, d Deliveries) {
	p := delivery.PathPrefix
	r.HandleFunc(p, h.serveLink).Methods(http.MethodGet, http.MethodPost)
	r.HandleFunc(p+"deliveries", func(w http.ResponseWriter, req *http.Request) { serveStats(w, req, d) }).Methods(http.MethodGet)
	r.HandleFunc(p+"outbox", func(w http.ResponseWriter, req *http.Request) { serveOutbox(w, req, d) }).Methods(http.MethodGet)
	r.HandleFunc("/_fanout/deliveries", func(w http.ResponseWriter, req *http.Request) { serveRecords(w, req, d) }).Methods(http.MethodGet)
	r.HandleFunc(p+"pending", h.servePending).Methods(http.MethodGet)
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
	if h.route != nil {
		if o := h.route(r.Form.Get("TopicArn")); o != nil {
			h = o
		}
	}
	h.ServeQuery(w, r, r.Form)
}

// paging reads ?limit and ?next, or answers 400.
func paging(w http.ResponseWriter, q url.Values) (limit int, next string, ok bool) {
	limit = defaultLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxLimit {
			badRequest(w, "limit: "+strconv.Quote(s)+" is not a whole number from 1 to "+strconv.Itoa(maxLimit))
			return 0, "", false
		}
		limit = n
	}
	return limit, q.Get("next"), true
}

// ringPaging is paging for the delivery ring's views (records, outbox),
// whose ?next must be a token the ring gave out.
func ringPaging(w http.ResponseWriter, q url.Values) (limit int, next string, ok bool) {
	if limit, next, ok = paging(w, q); ok && !delivery.ValidPageToken(next) {
		badRequest(w, "next: "+strconv.Quote(next)+" is not a token from a previous page")
		return 0, "", false
	}
	return limit, next, ok
}

// namespaceParams reads ?account= and ?region=, which keep what is of
// topics of one account and/or region, or answers 400.
func namespaceParams(w http.ResponseWriter, q url.Values) (account, region string, ok bool) {
	account, region = q.Get("account"), q.Get("region")
	if account != "" && !id.IsAccount(account) {
		badRequest(w, "account: "+strconv.Quote(account)+" is not an account id (12 digits)")
		return "", "", false
	}
	if region != "" && !sqsapi.IsRegion(region) {
		badRequest(w, "region: "+strconv.Quote(region)+" is not a region name such as us-east-1")
		return "", "", false
	}
	return account, region, true
}

func serveRecords(w http.ResponseWriter, req *http.Request, d Deliveries) {
	q := req.URL.Query()
	limit, next, ok := ringPaging(w, q)
	if !ok {
		return
	}
	account, region, ok := namespaceParams(w, q)
	if !ok {
		return
	}
	status := q.Get("status")
	if status != "" && !slices.Contains(delivery.Statuses, status) {
		badRequest(w, "status: "+strconv.Quote(status)+" is not one of "+strings.Join(delivery.Statuses, ", "))
		return
	}
	typ := q.Get("type")
	if typ != "" && typ != delivery.TypeNotification && typ != delivery.TypeSubscriptionConfirmation && typ != delivery.TypeUnsubscribeConfirmation {
		badRequest(w, "type: "+strconv.Quote(typ)+" is not Notification, SubscriptionConfirmation or UnsubscribeConfirmation")
		return
	}
	page := d.RecordPage(delivery.Query{
		SubscriptionArn: q.Get("subscription"), TopicArn: q.Get("topic"), Status: status, Type: typ,
		MessageID: q.Get("message"), Account: account, Region: region, Limit: limit, After: next,
	})
	// The messages the page is about, once each, with body and attributes.
	var messages []delivery.MessageView
	seen := map[string]bool{}
	for _, r := range page.Records {
		if r.Type != delivery.TypeNotification || seen[r.MessageID] {
			continue
		}
		seen[r.MessageID] = true
		if m, ok := d.Message(r.MessageID); ok {
			messages = append(messages, m)
		}
	}
	l := startList(w)
	l.array("deliveries", len(page.Records), func(i int) any { return page.Records[i] })
	l.array("messages", len(messages), func(i int) any { return messages[i] })
	l.field("dropped", page.Dropped)
	l.end(page.Next)
}

func serveOutbox(w http.ResponseWriter, req *http.Request, d Deliveries) {
	q := req.URL.Query()
	limit, next, ok := ringPaging(w, q)
	if !ok {
		return
	}
	account, region, ok := namespaceParams(w, q)
	if !ok {
		return
	}
	page := d.OutboxPage(delivery.OutboxQuery{Protocol: q.Get("protocol"), Endpoint: q.Get("endpoint"), Account: account, Region: region, Limit: limit, After: next})
	l := startList(w)
	l.array("messages", len(page.Entries), func(i int) any { return page.Entries[i] })
	l.field("dropped", page.Dropped)
	l.end(page.Next)
}

// serveStats pages the per-subscription counts by ARN; ?subscription=,
// ?endpoint=, ?account= and ?region= pick subscriptions (the totals stay
// the whole server's).
func serveStats(w http.ResponseWriter, req *http.Request, d Deliveries) {
	q := req.URL.Query()
	limit, next, ok := paging(w, q)
	if !ok {
		return
	}
	account, region, ok := namespaceParams(w, q)
	if !ok {
		return
	}
	s := d.Stats()
	subs := s.Subscriptions[:0:0]
	for _, c := range s.Subscriptions {
		if c.SubscriptionArn > next && (q.Get("subscription") == "" || q.Get("subscription") == c.SubscriptionArn) &&
			(q.Get("endpoint") == "" || q.Get("endpoint") == c.Endpoint) && delivery.InNamespace(c.SubscriptionArn, account, region) {
			subs = append(subs, c)
		}
	}
	next = ""
	if len(subs) > limit {
		subs = subs[:limit]
		next = subs[limit-1].SubscriptionArn
	}
	l := startList(w)
	for _, kv := range []struct {
		k string
		v int64
	}{{"delivered", s.Delivered}, {"failed", s.Failed}, {"deadLettered", s.DeadLettered}, {"dropped", s.Dropped},
		{"overflowed", s.Overflowed}, {"notDelivered", s.NotDelivered}, {"filtered", s.Filtered}, {"scheduled", s.Scheduled},
		{"pending", s.Pending}} {
		l.field(kv.k, kv.v)
	}
	l.array("subscriptions", len(subs), func(i int) any { return subs[i] })
	l.array("recentFailures", len(s.Failures), func(i int) any { return s.Failures[i] })
	l.end(next)
}

// servePending pages the subscriptions waiting for confirmation by ARN.
func (h *Handler) servePending(w http.ResponseWriter, req *http.Request) {
	limit, next, ok := paging(w, req.URL.Query())
	if !ok {
		return
	}
	engines := []*sns.Engine{h.engine}
	if h.all != nil {
		engines = h.all()
	}
	var all []sns.PendingSubscription
	for _, e := range engines {
		all = append(all, e.PendingSubscriptions()...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].SubscriptionArn < all[j].SubscriptionArn })
	var page []sns.PendingSubscription
	for _, p := range all {
		if p.SubscriptionArn > next {
			page = append(page, p)
		}
	}
	next = ""
	if len(page) > limit {
		page = page[:limit]
		next = page[limit-1].SubscriptionArn
	}
	l := startList(w)
	l.array("pending", len(page), func(i int) any { return page[i] })
	l.end(next)
}

// list streams a JSON object whose arrays are written one item at a time.
type list struct {
	w     http.ResponseWriter
	enc   *json.Encoder
	comma bool
}

func startList(w http.ResponseWriter) *list {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{"))
	return &list{w: w, enc: json.NewEncoder(w)}
}

func (l *list) key(k string) {
	if l.comma {
		_, _ = l.w.Write([]byte(",\n"))
	}
	l.comma = true
	_, _ = l.w.Write([]byte(strconv.Quote(k) + ":"))
}

func (l *list) field(k string, v any) {
	l.key(k)
	_ = l.enc.Encode(v)
}

func (l *list) array(k string, n int, item func(int) any) {
	l.key(k)
	_, _ = l.w.Write([]byte("["))
	for i := 0; i < n; i++ {
		if i > 0 {
			_, _ = l.w.Write([]byte(","))
		}
		_ = l.enc.Encode(item(i))
	}
	_, _ = l.w.Write([]byte("]"))
}

// end writes the page token ("" on the last page) and closes the object.
func (l *list) end(next string) {
	l.field("next", next)
	_, _ = l.w.Write([]byte("}\n"))
}

func badRequest(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
