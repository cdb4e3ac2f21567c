package admin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/sns"
	"github.com/fanout/fanout/sqs"
)

// The dashboard changes state through these small JSON endpoints, which
// call the engines directly: the page then needs no AWS signature. Each
// requires a JSON body, which a cross-site HTML form cannot send (browsers
// send JSON cross-site only after a CORS preflight, which fanout does not
// grant to other sites), on top of the cross-origin check every /_fanout/
// POST gets.
func (d Deps) actionRoutes(r *mux.Router) {
	r.HandleFunc("/_fanout/sqs/queues/{name}/send", d.jsonAction(d.send)).Methods(http.MethodPost)
	r.HandleFunc("/_fanout/sqs/queues/{name}/purge", d.jsonAction(d.purge)).Methods(http.MethodPost)
	r.HandleFunc("/_fanout/sqs/queues/{name}/redrive", d.jsonAction(d.redrive)).Methods(http.MethodPost)
	r.HandleFunc("/_fanout/sns/topics/{name}/publish", d.jsonAction(d.publish)).Methods(http.MethodPost)
}

// publishSettle bounds how long a publish from the page waits for the
// deliveries it started.
const publishSettle = 2 * time.Second

// maxAction bounds an action's body: a 1 MiB message, JSON-escaped.
const maxAction = 8 << 20

// actionFunc is one action: vars are the path's, q the query string
// (?account= and ?region= say which namespace's queue or topic a name is).
type actionFunc func(vars map[string]string, q url.Values, body []byte) (any, error)

// jsonAction checks the content type, reads the body and renders the
// result; an AWS error keeps its code, message and status.
func (d Deps) jsonAction(f actionFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, "this endpoint changes state, so it takes only Content-Type: application/json (a cross-site form cannot send it)")
			return
		}
		var raw json.RawMessage
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAction)).Decode(&raw); err != nil {
			writeError(w, http.StatusBadRequest, "the body must be one JSON object: "+err.Error())
			return
		}
		out, err := f(mux.Vars(r), r.URL.Query(), raw)
		var bad badRequest
		var ae *awserr.Error
		switch {
		case errors.As(err, &bad):
			writeError(w, http.StatusBadRequest, bad.msg)
		case errors.As(err, &ae):
			writeJSON(w, ae.StatusFor(false), map[string]string{"error": ae.MessageFor(false), "code": ae.Code})
		case err != nil:
			writeError(w, http.StatusInternalServerError, err.Error())
		default:
			writeJSON(w, http.StatusOK, out)
		}
	}
}

type badRequest struct{ msg string }

func (b badRequest) Error() string { return b.msg }

func badf(format string, args ...any) error { return badRequest{fmt.Sprintf(format, args...)} }

// decodeStrict reads body into v, refusing unknown fields so that a typo
// is an error rather than silently ignored.
func decodeStrict(body []byte, v any, shape string) error {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return badf("the body must be JSON like %s: %v", shape, err)
	}
	return nil
}

// attributeJSON is a message attribute in the AWS CLI's shape, as the
// playground takes it: {"DataType":"String","StringValue":"…"}.
type attributeJSON struct {
	DataType    string `json:"DataType"`
	StringValue string `json:"StringValue,omitempty"`
	BinaryValue string `json:"BinaryValue,omitempty"` // base64
}

func (a attributeJSON) binary(name string) ([]byte, error) {
	if a.BinaryValue == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(a.BinaryValue)
	if err != nil {
		return nil, badf("attribute %s: BinaryValue is not base64: %v", name, err)
	}
	return b, nil
}

type sendRequest struct {
	Body            string                   `json:"body"`
	Attributes      map[string]attributeJSON `json:"attributes"`
	DelaySeconds    *int                     `json:"delaySeconds"`
	GroupID         string                   `json:"groupId"`
	DeduplicationID string                   `json:"deduplicationId"`
}

func (d Deps) send(vars map[string]string, query url.Values, body []byte) (any, error) {
	var req sendRequest
	if err := decodeStrict(body, &req, `{"body":"…","attributes":{"k":{"DataType":"String","StringValue":"v"}},"delaySeconds":0}`); err != nil {
		return nil, err
	}
	q, ns, err := d.queueOf(query, vars["name"])
	if err != nil {
		return nil, err
	}
	in := sqs.SendInput{Body: req.Body, DelaySeconds: req.DelaySeconds, GroupID: req.GroupID, DeduplicationID: req.DeduplicationID, SenderID: ns.Account}
	for _, name := range sortedNames(req.Attributes) {
		a := req.Attributes[name]
		b, err := a.binary(name)
		if err != nil {
			return nil, err
		}
		in.Attributes = append(in.Attributes, sqs.MessageAttribute{Name: name, DataType: a.DataType, StringValue: a.StringValue, BinaryValue: b})
	}
	res, err := q.Send(in)
	if err != nil {
		return nil, err
	}
	return map[string]string{"messageId": res.MessageID}, nil
}

func (d Deps) purge(vars map[string]string, query url.Values, _ []byte) (any, error) {
	q, _, err := d.queueOf(query, vars["name"])
	if err != nil {
		return nil, err
	}
	if err := q.Purge(); err != nil {
		return nil, err
	}
	return map[string]bool{"purged": true}, nil
}

type redriveRequest struct {
	Destination string `json:"destination"` // an ARN; "" moves each message back to its source
	Rate        *int   `json:"rate"`        // messages per second; nil: as fast as SQS allows
}

func (d Deps) redrive(vars map[string]string, query url.Values, body []byte) (any, error) {
	var req redriveRequest
	if err := decodeStrict(body, &req, `{"destination":"arn:aws:sqs:…" (optional),"rate":10 (optional)}`); err != nil {
		return nil, err
	}
	q, ns, err := d.queueOf(query, vars["name"])
	if err != nil {
		return nil, err
	}
	handle, err := ns.SQS.StartMoveTask(q.Arn(), req.Destination, req.Rate)
	if err != nil {
		return nil, err
	}
	return map[string]string{"taskHandle": handle}, nil
}

type publishRequest struct {
	Message         string                   `json:"message"`
	Subject         *string                  `json:"subject"`
	Attributes      map[string]attributeJSON `json:"attributes"`
	GroupID         string                   `json:"groupId"`
	DeduplicationID string                   `json:"deduplicationId"`
}

func (d Deps) publish(vars map[string]string, query url.Values, body []byte) (any, error) {
	var req publishRequest
	if err := decodeStrict(body, &req, `{"message":"…","subject":"…","attributes":{"k":{"DataType":"String","StringValue":"v"}}}`); err != nil {
		return nil, err
	}
	ns, err := d.topicOf(query, vars["name"])
	if err != nil {
		return nil, err
	}
	in := sns.PublishInput{TopicArn: ns.SNS.TopicArn(vars["name"]), Message: &req.Message, Subject: req.Subject, GroupID: req.GroupID, DedupID: req.DeduplicationID}
	for _, name := range sortedNames(req.Attributes) {
		a := req.Attributes[name]
		b, err := a.binary(name)
		if err != nil {
			return nil, err
		}
		ma := sns.MessageAttribute{Name: name, DataType: &a.DataType, BinaryValue: b}
		if b == nil {
			ma.StringValue = &a.StringValue
		}
		in.Attributes = append(in.Attributes, ma)
	}
	res, err := ns.SNS.Publish(in)
	if err != nil {
		return nil, err
	}
	if d.Settle != nil {
		// Let the first attempts to HTTP and Lambda endpoints finish, so the
		// page shows their outcome; a slow endpoint only delays this a bit.
		ctx, cancel := context.WithTimeout(context.Background(), publishSettle)
		_ = d.Settle(ctx)
		cancel()
	}
	out := map[string]string{"messageId": res.MessageID}
	if res.SequenceNumber != "" {
		out["sequenceNumber"] = res.SequenceNumber
	}
	return out, nil
}
