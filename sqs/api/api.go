// Package api puts the SQS engine on the wire: it decodes each action from
// AWS JSON 1.0 or the Query protocol, calls the engine and encodes the reply
// in the same protocol. One file per group of actions; no queue semantics here.
package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/internal/id"
	"github.com/fanout/fanout/internal/jsondepth"
	"github.com/fanout/fanout/sqs"
)

// Namespaces of the two SQS protocols.
const (
	jsonNamespace = "com.amazonaws.sqs"
	xmlNamespace  = "http://queue.amazonaws.com/doc/2012-11-05/"
	// maxBody bounds what a request may carry: a 1 MiB message, JSON-escaped.
	maxBody = 8 << 20
)

// Handler serves SQS.
type Handler struct {
	engine *sqs.Engine
	log    *slog.Logger
	// lookup finds the engine of another account or region that a queue
	// URL or ARN names; nil when no such engine exists.
	lookup func(account, region string) *sqs.Engine
	// urlStyle is the shape of the queue URLs it returns.
	urlStyle string
	// authorize, when set, decides a call on a queue of another account
	// than the engine's (the caller's): see WithAuthorizer.
	authorize Authorizer
}

// Authorizer decides whether caller (an account id) may call action on q, a
// queue of another account's engine owner; q is nil when the call names the
// queue by an ARN or a move task handle and no such queue exists. An error
// (AWS's) ends the call.
type Authorizer func(action, caller string, owner *sqs.Engine, q *sqs.Queue) error

// WithAuthorizer makes every call on another account's queue ask authorize
// first, as AWS asks the queue's Policy.
func (h *Handler) WithAuthorizer(authorize Authorizer) *Handler {
	h.authorize = authorize
	return h
}

// WithLookup lets the handler serve queues of other accounts and regions
// than its engine's: a queue URL or ARN naming one is served by the engine
// lookup returns for it, and is QueueDoesNotExist when lookup returns nil.
func (h *Handler) WithLookup(lookup func(account, region string) *sqs.Engine) *Handler {
	h.lookup = lookup
	return h
}

// New returns a handler for engine.
func New(engine *sqs.Engine, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{engine: engine, log: log}
}

// request is one decoded call.
type request struct {
	// engine serves the call: the handler's, or that of the account and
	// region its queue URL or ARN names.
	engine   *sqs.Engine
	ctx      context.Context
	in       input
	query    bool
	host     string
	tls      bool // called over HTTPS: queue URLs say https
	path     string
	senderID string
	op       string // the action, for the authorizer
}

// reply is an action's result, renderable in both protocols. A nil reply is
// an action without output.
type reply interface {
	json() any
	xml(x *awswire.XMLWriter)
}

type action func(h *Handler, r *request) (reply, error)

// releaser is a reply in memory that is reused once it has been written.
type releaser interface{ release() }

// written gives rep's memory back, if it has any to give.
func written(rep reply) {
	if r, ok := rep.(releaser); ok {
		r.release()
	}
}

var actions = map[string]action{
	"CreateQueue":                  (*Handler).createQueue,
	"DeleteQueue":                  (*Handler).deleteQueue,
	"GetQueueUrl":                  (*Handler).getQueueURL,
	"ListQueues":                   (*Handler).listQueues,
	"GetQueueAttributes":           (*Handler).getQueueAttributes,
	"SetQueueAttributes":           (*Handler).setQueueAttributes,
	"PurgeQueue":                   (*Handler).purgeQueue,
	"TagQueue":                     (*Handler).tagQueue,
	"UntagQueue":                   (*Handler).untagQueue,
	"ListQueueTags":                (*Handler).listQueueTags,
	"AddPermission":                (*Handler).addPermission,
	"RemovePermission":             (*Handler).removePermission,
	"ListDeadLetterSourceQueues":   (*Handler).listDeadLetterSourceQueues,
	"SendMessage":                  (*Handler).sendMessage,
	"SendMessageBatch":             (*Handler).sendMessageBatch,
	"ReceiveMessage":               (*Handler).receiveMessage,
	"DeleteMessage":                (*Handler).deleteMessage,
	"DeleteMessageBatch":           (*Handler).deleteMessageBatch,
	"ChangeMessageVisibility":      (*Handler).changeMessageVisibility,
	"ChangeMessageVisibilityBatch": (*Handler).changeMessageVisibilityBatch,
	"StartMessageMoveTask":         (*Handler).startMessageMoveTask,
	"ListMessageMoveTasks":         (*Handler).listMessageMoveTasks,
	"CancelMessageMoveTask":        (*Handler).cancelMessageMoveTask,
}

// IsAction reports whether name is an SQS action, for routing.
func IsAction(name string) bool { _, ok := actions[name]; return ok }

// ServeJSON serves an AWS JSON 1.0 call; target is the X-Amz-Target action.
func (h *Handler) ServeJSON(w http.ResponseWriter, r *http.Request, op string) {
	rid := id.UUID()
	body, err := awswire.ReadBody(r, maxBody)
	if errors.Is(err, awswire.ErrTooLarge) {
		awswire.WriteTooLarge(w, maxBody)
		return
	}
	if err != nil {
		h.fail(w, rid, false, op, sqs.ErrSerialization.New("failed to read the request body"))
		return
	}
	act, ok := actions[op]
	if !ok {
		awswire.NoteCall(w, "sqs", op, "")
		h.fail(w, rid, false, op, sqs.ErrUnknownOperation.New(""))
		return
	}
	if len(body) == 0 {
		body = []byte("{}")
	}
	// The body is never written again, so gjson's strings can point into
	// it instead of into a copy: what an action keeps keeps the body alive,
	// as it kept the copy.
	text := unsafe.String(unsafe.SliceData(body), len(body))
	var d *jsonDecoder
	if op == "ReceiveMessage" {
		// A long poll may wait 20 seconds: it indexes into slices of its
		// own size rather than holding a pooled decoder (4.6 KiB) that long.
		d = &jsonDecoder{}
	} else {
		d = decoders.Get().(*jsonDecoder)
		defer d.release()
	}
	in, ok := d.decodeOnePass(text)
	var jerr *awserr.Error
	if !ok {
		// Depth and validity in one flat pass: gjson's own validator
		// recurses once per level, and a second scan would cost a 1 MiB
		// body twice.
		if !jsondepth.Valid(body, jsondepth.Max) {
			h.fail(w, rid, false, op, sqs.ErrSerialization.New("Start of structure or map found where not expected."))
			return
		}
		in, jerr = d.decode(gjson.Parse(text))
	}
	if jerr != nil {
		awswire.NoteCall(w, "sqs", op, "")
		h.fail(w, rid, false, op, jerr)
		return
	}
	req := &request{engine: h.engine, ctx: r.Context(), in: in, host: r.Host, tls: r.TLS != nil, path: r.URL.Path, senderID: senderID(r), op: op}
	if awswire.Noting(w) {
		awswire.NoteCall(w, "sqs", op, req.resource())
	}
	rep, err := act(h, req)
	if err != nil {
		h.fail(w, rid, false, op, err)
		return
	}
	if rep == nil {
		awswire.WriteJSONBytes(w, rid, []byte("{}"))
		return
	}
	defer written(rep)
	if fast, ok := rep.(jsonAppender); ok {
		o := replies.Get().(*awswire.JSONObject)
		o.Reset()
		o.Open()
		fast.appendJSON(o)
		o.Close()
		awswire.WriteJSONBytes(w, rid, o.Buf)
		if cap(o.Buf) <= pooledReplyCap {
			replies.Put(o)
		}
		return
	}
	awswire.WriteJSON(w, rid, rep.json())
}

// pooledReplyCap is the largest reply buffer kept for reuse.
const pooledReplyCap = 64 << 10

// replies recycles the writers of JSON replies with their buffers.
var replies = sync.Pool{New: func() any { return &awswire.JSONObject{Buf: make([]byte, 0, 4096)} }}

// ServeQuery serves a Query-protocol call whose parameters are already parsed.
func (h *Handler) ServeQuery(w http.ResponseWriter, r *http.Request, params url.Values) {
	rid := id.UUID()
	op := params.Get("Action")
	act, ok := actions[op]
	if !ok {
		awswire.NoteCall(w, "sqs", op, "")
		h.fail(w, rid, true, op, sqs.ErrInvalidAction.New("The action %s is not valid for this endpoint.", op))
		return
	}
	req := &request{engine: h.engine, ctx: r.Context(), in: queryInput{awswire.NewForm(params)}, query: true, host: r.Host, tls: r.TLS != nil, path: r.URL.Path, senderID: senderID(r), op: op}
	if awswire.Noting(w) {
		awswire.NoteCall(w, "sqs", op, req.resource())
	}
	rep, err := act(h, req)
	if err != nil {
		h.fail(w, rid, true, op, err)
		return
	}
	var body func(*awswire.XMLWriter)
	if rep != nil {
		body = rep.xml
		defer written(rep)
	}
	awswire.WriteQueryResponse(w, op, xmlNamespace, rid, body)
}

func (h *Handler) fail(w http.ResponseWriter, rid string, query bool, op string, err error) {
	var ae *awserr.Error
	if !errors.As(err, &ae) {
		h.log.Error("internal failure", "request_id", rid, "action", op, "error", err)
		ae = awserr.Internal.New("An internal error occurred.")
	}
	if query {
		awswire.WriteXMLError(w, rid, xmlNamespace, ae)
	} else {
		awswire.WriteJSONError(w, rid, jsonNamespace, ae)
	}
}

// senderID is the caller's access key id from its SigV4 Authorization header,
// the closest an emulator can come to AWS's SenderId. Only what could be an
// access key id is taken: at most 128 word characters, IAM's bound (shorter
// ones than IAM's 16, such as "test", are what local setups use). Every
// message keeps its sender, so a header must not choose its size.
func senderID(r *http.Request) string {
	const anonymous = "AIDAIT2UOQQY3AUEKVGXU"
	auth := r.Header.Get("Authorization")
	i := strings.Index(auth, "Credential=")
	if i < 0 {
		return anonymous
	}
	cred := auth[i+len("Credential="):]
	j := strings.IndexByte(cred, '/')
	if j < 1 || j > 128 {
		return anonymous
	}
	for _, c := range []byte(cred[:j]) {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return anonymous
		}
	}
	return cred[:j]
}

// resource names the queue a call is about, for the request log: the
// last part of QueueUrl (or of the path a Query call was POSTed to), the
// QueueName of CreateQueue and GetQueueUrl, or a move task's source queue.
func (r *request) resource() string {
	u := r.in.str("QueueUrl")
	if u == "" && r.query {
		u = r.path
	}
	if u = strings.TrimRight(u, "/"); u != "" {
		return u[strings.LastIndexByte(u, '/')+1:]
	}
	if n := r.in.str("QueueName"); n != "" {
		return n
	}
	if a := r.in.str("SourceArn"); a != "" {
		return a[strings.LastIndexByte(a, ':')+1:]
	}
	return ""
}
