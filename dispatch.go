package fanout

import (
	"errors"
	"net/http"
	"strings"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/internal/id"
	snsapi "github.com/fanout/fanout/sns/api"
	sqsapi "github.com/fanout/fanout/sqs/api"
)

// maxForm bounds a Query-protocol body: a 1 MiB message, URL-encoded.
const maxForm = 8 << 20

// dispatcher picks the service and protocol of an AWS call: X-Amz-Target
// for JSON protocols; for the Query protocol the Version parameter, then the
// service in the SigV4 credential scope, then the action's name.
type dispatcher struct {
	sqs *sqsapi.Handler
	sns *snsapi.Handler
}

func newDispatcher(s *sqsapi.Handler, n *snsapi.Handler) *dispatcher {
	return &dispatcher{sqs: s, sns: n}
}

var missingAction = awserr.Kind{Code: "MissingAction", Status: 400, Fault: awserr.Sender}

func (d *dispatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		svc, op, _ := strings.Cut(target, ".")
		if svc == "AmazonSQS" {
			d.sqs.ServeJSON(w, r, op)
			return
		}
		awswire.WriteJSONError(w, id.UUID(), "com.amazon.coral.service", awserr.Kind{Code: "UnknownOperationException", Status: 400}.New(""))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
			awswire.WriteTooLarge(w, maxForm)
			return
		}
		awswire.WriteXMLError(w, id.UUID(), "http://queue.amazonaws.com/doc/2012-11-05/", awserr.Kind{Code: "MalformedQueryString", Status: 400}.New("The request could not be parsed."))
		return
	}
	form := r.Form
	action := form.Get("Action")
	if action == "" {
		awswire.WriteXMLError(w, id.UUID(), "http://queue.amazonaws.com/doc/2012-11-05/", missingAction.New("The request must contain the parameter Action."))
		return
	}
	switch service(form.Get("Version"), r.Header.Get("Authorization"), action) {
	case "sns":
		d.sns.ServeQuery(w, r, form)
	default:
		d.sqs.ServeQuery(w, r, form)
	}
}

// service decides which service a Query call is for.
func service(version, auth, action string) string {
	switch version {
	case "2012-11-05":
		return "sqs"
	case "2010-03-31":
		return "sns"
	}
	if i := strings.Index(auth, "Credential="); i >= 0 {
		// Credential=AKID/date/region/service/aws4_request
		parts := strings.Split(strings.SplitN(auth[i+len("Credential="):], ",", 2)[0], "/")
		if len(parts) >= 4 && (parts[3] == "sqs" || parts[3] == "sns") {
			return parts[3]
		}
	}
	if sqsapi.IsAction(action) {
		return "sqs"
	}
	return "sns"
}
