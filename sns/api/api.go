// Package api puts the SNS engine on the wire: the Query protocol
// (Action=...&Version=2010-03-31, XML replies) that every AWS SDK and the AWS
// CLI speak to SNS, and the /_fanout/sns/ endpoints that messages link to.
// One file per group of actions; no topic semantics here.
package api

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/internal/id"
	"github.com/fanout/fanout/sns"
)

// Namespace is the XML namespace of SNS replies.
const Namespace = "http://sns.amazonaws.com/doc/2010-03-31/"

// Handler serves SNS.
type Handler struct {
	engine *sns.Engine
	log    *slog.Logger
	// route finds the handler of the namespace a confirmation or
	// unsubscribe link's TopicArn names; nil serves every link here.
	route func(topicArn string) *Handler
	// all, when set, lists the engines of every namespace, for the admin
	// views that cover them all (GET /_fanout/sns/pending).
	all func() []*sns.Engine
}

// WithAll makes the handler's admin views cover the engines all lists
// (every account and region) rather than its own only.
func (h *Handler) WithAll(all func() []*sns.Engine) *Handler {
	h.all = all
	return h
}

// WithRoute lets the handler's links (SubscribeURL, UnsubscribeURL) serve
// topics of other accounts and regions: route returns the handler of the
// namespace a link's TopicArn names, or nil for this one.
func (h *Handler) WithRoute(route func(topicArn string) *Handler) *Handler {
	h.route = route
	return h
}

// New returns a handler for engine.
func New(engine *sns.Engine, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{engine: engine, log: log}
}

// request is one decoded call.
type request struct {
	f awswire.Form
	// signed says whether the call carried a SigV4 signature; AWS records
	// it for ConfirmSubscription.
	signed bool
	// caller is the caller's account, "" when it is the engine's.
	caller string
}

// result writes an action's <OpResult> content; a nil result is an action
// without output (no Result element at all).
type result func(x *awswire.XMLWriter)

// empty is the result of actions whose Result element AWS sends empty.
func empty(*awswire.XMLWriter) {}

type action func(h *Handler, r *request) (result, error)

var actions = map[string]action{
	"CreateTopic":               (*Handler).createTopic,
	"DeleteTopic":               (*Handler).deleteTopic,
	"ListTopics":                (*Handler).listTopics,
	"GetTopicAttributes":        (*Handler).getTopicAttributes,
	"SetTopicAttributes":        (*Handler).setTopicAttributes,
	"Subscribe":                 (*Handler).subscribe,
	"ConfirmSubscription":       (*Handler).confirmSubscription,
	"Unsubscribe":               (*Handler).unsubscribe,
	"ListSubscriptions":         (*Handler).listSubscriptions,
	"ListSubscriptionsByTopic":  (*Handler).listSubscriptionsByTopic,
	"GetSubscriptionAttributes": (*Handler).getSubscriptionAttributes,
	"SetSubscriptionAttributes": (*Handler).setSubscriptionAttributes,
	"Publish":                   (*Handler).publish,
	"PublishBatch":              (*Handler).publishBatch,
	"TagResource":               (*Handler).tagResource,
	"UntagResource":             (*Handler).untagResource,
	"ListTagsForResource":       (*Handler).listTagsForResource,
	"AddPermission":             (*Handler).addPermission,
	"RemovePermission":          (*Handler).removePermission,
}

// ServeQuery serves a Query-protocol call whose parameters are already parsed.
func (h *Handler) ServeQuery(w http.ResponseWriter, r *http.Request, params url.Values) {
	h.ServeQueryFrom(w, r, params, "")
}

// ServeQueryFrom serves a Query-protocol call made by account caller
// ("" for the engine's own).
func (h *Handler) ServeQueryFrom(w http.ResponseWriter, r *http.Request, params url.Values, caller string) {
	rid := id.UUID()
	op := params.Get("Action")
	if awswire.Noting(w) {
		awswire.NoteCall(w, "sns", op, topicOf(params))
	}
	act, ok := actions[op]
	if !ok {
		h.fail(w, rid, op, sns.ErrInvalidAction.New("The action %s is not valid for this endpoint.", op))
		return
	}
	req := &request{f: awswire.NewForm(params), signed: r.Header.Get("Authorization") != "" || params.Get("X-Amz-Signature") != "", caller: caller}
	res, err := act(h, req)
	if err != nil {
		h.fail(w, rid, op, err)
		return
	}
	awswire.WriteQueryResponse(w, op, Namespace, rid, res)
}

// fail renders err as SNS does: ErrorResponse with Type, Code and Message.
// Anything that is not an *awserr.Error is a bug, logged and answered as
// InternalError.
func (h *Handler) fail(w http.ResponseWriter, rid, op string, err error) {
	var ae *awserr.Error
	if !errors.As(err, &ae) {
		h.log.Error("internal failure", "request_id", rid, "action", op, "error", err)
		ae = sns.ErrInternal.New("Internal error")
	}
	writeError(w, rid, ae)
}

// writeError writes an SNS error reply. Unlike SQS, SNS sends no <Detail/>.
// WriteError renders e as SNS's Query ErrorResponse (which has no Detail,
// unlike SQS's), with a new request id.
func WriteError(w http.ResponseWriter, e *awserr.Error) { writeError(w, id.UUID(), e) }

func writeError(w http.ResponseWriter, rid string, e *awserr.Error) {
	var x awswire.XMLWriter
	x.Header()
	x.OpenNS("ErrorResponse", Namespace)
	x.Open("Error")
	x.Elem("Type", string(e.FaultOrSender()))
	x.Elem("Code", e.QueryCodeOrCode())
	x.Elem("Message", e.MessageFor(true))
	x.Close("Error")
	x.Elem("RequestId", rid)
	x.Close("ErrorResponse")
	hd := w.Header()
	hd.Set("Content-Type", awswire.ContentXML)
	hd.Set(awswire.RequestIDHeader, rid)
	hd.Set("Content-Length", strconv.Itoa(len(x.Buf)))
	awswire.NoteError(w, e.QueryCodeOrCode())
	w.WriteHeader(e.StatusFor(true))
	_, _ = w.Write(x.Buf)
}

// attributes writes a map as <Attributes><entry><key/><value/></entry>...,
// keys sorted so replies are stable.
func attributes(x *awswire.XMLWriter, m map[string]string) {
	x.Open("Attributes")
	for _, k := range sortedKeys(m) {
		x.Open("entry")
		x.Elem("key", k)
		x.Elem("value", m[k])
		x.Close("entry")
	}
	x.Close("Attributes")
}

// topicOf names what an SNS call is about, for the request log: the topic
// (from TopicArn, TargetArn, a subscription's or a resource's ARN, or the
// Name of CreateTopic).
func topicOf(p url.Values) string {
	for _, k := range []string{"TopicArn", "TargetArn", "ResourceArn", "SubscriptionArn"} {
		if v := p.Get(k); v != "" {
			// arn:aws:sns:region:account:topic[:subscription]: the sixth
			// field, cut out without splitting the whole ARN (a Publish
			// otherwise allocates for its request log line).
			rest, ok := v, true
			for range 5 {
				if _, rest, ok = strings.Cut(rest, ":"); !ok {
					return v
				}
			}
			name, _, _ := strings.Cut(rest, ":")
			return name
		}
	}
	if v := p.Get("PhoneNumber"); v != "" {
		return v
	}
	return p.Get("Name")
}
