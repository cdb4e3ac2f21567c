package fanout

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unsafe"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/internal/iampolicy"
	"github.com/fanout/fanout/internal/id"
	"github.com/fanout/fanout/internal/sigv4"
	"github.com/fanout/fanout/sns"
	snsapi "github.com/fanout/fanout/sns/api"
	sqsapi "github.com/fanout/fanout/sqs/api"
)

// maxForm bounds a Query-protocol body: a 1 MiB message, URL-encoded.
const maxForm = 8 << 20

const (
	sqsXMLNS  = "http://queue.amazonaws.com/doc/2012-11-05/"
	coralJSON = "com.amazon.coral.service"
)

// dispatcher picks the service and protocol of an AWS call: X-Amz-Target
// for JSON protocols; for the Query protocol the Version parameter, then the
// service in the SigV4 credential scope, then the action's name.
//
// It also keeps web pages out: a page can make a browser send a GET or a
// form POST to fanout without asking (no CORS preflight), but not one with
// an Authorization or X-Amz-Target header. So a Query call must be a signed
// POST of a form, unless allowUnsigned. With a verifier, every call's
// signature is checked against its keys.
type dispatcher struct {
	ns            *namespaces
	allowUnsigned bool
	verifier      *sigv4.Verifier
	// enforcePolicies makes a topic's Policy decide the calls of other
	// accounts, as it does SNS's deliveries to queues.
	enforcePolicies bool
}

// subscriberActions are the SNS actions a subscriber of another account
// may take without the topic's Policy: ConfirmSubscription holds the token,
// and a subscription's own calls are its owner's (fanout does not record
// which account made a subscription, so any account may).
var subscriberActions = map[string]bool{"ConfirmSubscription": true, "Unsubscribe": true,
	"GetSubscriptionAttributes": true, "SetSubscriptionAttributes": true}

// topicPolicyDenies answers a call of account on another account's topic
// with AWS's AuthorizationError unless the topic's Policy allows it. A
// topic that does not exist is left to the engine to report.
func topicPolicyDenies(ns *namespace, account, action string, form url.Values) *awserr.Error {
	arn := form.Get("TopicArn")
	if arn == "" {
		arn = form.Get("ResourceArn")
	}
	if arn == "" {
		if sub := form.Get("SubscriptionArn"); strings.Count(sub, ":") == 6 {
			arn = sub[:strings.LastIndexByte(sub, ':')]
		}
	}
	attrs, err := ns.sns.TopicAttributes(arn)
	if err != nil {
		return nil
	}
	if iampolicy.AllowsAccount(attrs[sns.AttrPolicy], account, "SNS:"+action, arn) {
		return nil
	}
	return sns.ErrAuthorization.New("User: arn:aws:iam::%s:root is not authorized to perform: SNS:%s on resource: %s because no resource-based policy allows the SNS:%s action",
		account, action, arn, action)
}

func newDispatcher(ns *namespaces) *dispatcher {
	return &dispatcher{ns: ns}
}

var (
	missingAction        = awserr.Kind{Code: "MissingAction", Status: 400, Fault: awserr.Sender}
	malformedQuery       = awserr.Kind{Code: "MalformedQueryString", Status: 400, Fault: awserr.Sender}
	methodNotAllowed     = awserr.Kind{Code: "MethodNotAllowed", Status: 405, Fault: awserr.Sender}
	unsupportedMediaType = awserr.Kind{Code: "UnsupportedMediaType", Status: 415, Fault: awserr.Sender}
)

func (d *dispatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		d.serveJSON(w, r, target)
		return
	}
	form, body, err := readForm(r)
	if err != nil {
		if errors.Is(err, awswire.ErrTooLarge) {
			awswire.WriteTooLarge(w, maxForm)
			return
		}
		awswire.WriteXMLError(w, id.UUID(), sqsXMLNS, malformedQuery.New("The request could not be parsed."))
		return
	}
	action := form.Get("Action")
	if action == "" {
		awswire.WriteXMLError(w, id.UUID(), sqsXMLNS, missingAction.New("The request must contain the parameter Action."))
		return
	}
	svc := service(form.Get("Version"), r.Header.Get("Authorization"), action)
	account, e := d.checkQuery(r, body, svc)
	if e != nil {
		if svc == "sns" {
			snsapi.WriteError(w, e)
		} else {
			awswire.WriteXMLError(w, id.UUID(), sqsXMLNS, e)
		}
		return
	}
	account, region := d.caller(r, account)
	switch svc {
	case "sns":
		ns := d.snsNamespace(account, region, action, form)
		if ns.account != account && d.enforcePolicies && !subscriberActions[action] {
			if e := topicPolicyDenies(ns, account, action, form); e != nil {
				snsapi.WriteError(w, e)
				return
			}
		}
		ns.snsAPI.ServeQueryFrom(w, r, form, account)
	default:
		d.sqsNamespace(account, region, action).sqsAPI.ServeQuery(w, r, form)
	}
}

// sqsNamespace is the namespace an SQS call starts in: its caller's. A
// queue URL or ARN of another namespace takes the handler there.
func (d *dispatcher) sqsNamespace(account, region, action string) *namespace {
	if action == "CreateQueue" {
		return d.ns.get(account, region)
	}
	return d.ns.view(account, region)
}

// snsNamespace is the namespace of an SNS call: that of the topic or
// subscription it names when that exists in the caller's region (a topic of
// another account, which its policy may open to the caller), else the
// caller's, whose engine answers for an ARN it does not hold as AWS does.
func (d *dispatcher) snsNamespace(account, region, action string, form url.Values) *namespace {
	if action == "CreateTopic" {
		return d.ns.get(account, region)
	}
	for _, p := range [...]string{"TopicArn", "SubscriptionArn", "ResourceArn"} {
		if v := form.Get(p); v != "" {
			if r, a, _, ok := splitArn(v, "sns"); ok && r == region && a != account {
				if ns := d.ns.lookup(a, r); ns != nil {
					return ns
				}
			}
			break
		}
	}
	return d.ns.view(account, region)
}

func (d *dispatcher) serveJSON(w http.ResponseWriter, r *http.Request, target string) {
	svc, op, _ := strings.Cut(target, ".")
	if svc != "AmazonSQS" {
		awswire.WriteJSONError(w, id.UUID(), coralJSON, awserr.Kind{Code: "UnknownOperationException", Status: 400}.New(""))
		return
	}
	account := ""
	if d.verifier != nil {
		body, err := awswire.ReadBody(r, maxForm)
		if err != nil {
			awswire.WriteTooLarge(w, maxForm)
			return
		}
		var e *awserr.Error
		if account, e = d.verify(r, body, "sqs"); e != nil {
			awswire.WriteJSONError(w, id.UUID(), coralJSON, e)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	account, region := d.caller(r, account)
	d.sqsNamespace(account, region, op).sqsAPI.ServeJSON(w, r, op)
}

// checkQuery applies the browser rule and, with a verifier, checks the
// signature of a Query call for service svc, returning its key's account.
func (d *dispatcher) checkQuery(r *http.Request, body []byte, svc string) (string, *awserr.Error) {
	if d.verifier != nil {
		// A valid signature cannot come from a page that lacks the secret,
		// so a verified call may take any shape AWS accepts, GET included.
		return d.verify(r, body, svc)
	}
	if d.allowUnsigned {
		return "", nil
	}
	s, e := sigv4.Parse(r)
	if e != nil {
		return "", e
	}
	if s == nil {
		return "", sigv4.ErrMissing.New(sigv4.MissingMessage)
	}
	if r.Method != http.MethodPost {
		return "", methodNotAllowed.New("The specified method is not allowed against this resource: fanout serves Query calls only as a POST of a form (application/x-www-form-urlencoded), which a web page cannot send with a signature. Start fanout with --allow-unsigned to allow %s.", r.Method)
	}
	if !isForm(r) {
		return "", unsupportedMediaType.New("A Query call must be a POST with Content-Type application/x-www-form-urlencoded, not %q.", clip(r.Header.Get("Content-Type")))
	}
	return "", nil
}

// verify checks r's signature with the verifier: a signature is required.
// It returns the account of the key that signed.
func (d *dispatcher) verify(r *http.Request, body []byte, services ...string) (string, *awserr.Error) {
	s, e := sigv4.Parse(r)
	if e != nil {
		return "", e
	}
	if s == nil {
		return "", sigv4.ErrMissing.New(sigv4.MissingMessage)
	}
	k, e := d.verifier.Verify(r, s, body, services...)
	return k.Account, e
}

// caller is the account and region a call's credentials name: the account
// of the key that signed it (keyAccount, with --credentials), else its
// access key id when that is 12 digits (LocalStack's convention), else the
// default; the region of its SigV4 credential scope, else the default.
func (d *dispatcher) caller(r *http.Request, keyAccount string) (account, region string) {
	account, region = d.ns.def.account, d.ns.def.region
	cred := ""
	if auth := r.Header.Get("Authorization"); auth != "" {
		if i := strings.Index(auth, "Credential="); i >= 0 {
			cred = auth[i+len("Credential="):]
		}
	} else if strings.Contains(r.URL.RawQuery, "X-Amz-Credential=") {
		cred = r.URL.Query().Get("X-Amz-Credential")
	}
	// Credential=AKID/date/region/service/aws4_request
	if key, rest, ok := strings.Cut(cred, "/"); ok {
		if keyAccount == "" && id.IsAccount(key) {
			account = key
		}
		if _, rest, ok = strings.Cut(rest, "/"); ok {
			if reg, _, ok := strings.Cut(rest, "/"); ok && sqsapi.IsRegion(reg) {
				region = reg
			}
		}
	}
	if keyAccount != "" {
		account = keyAccount
	}
	return account, region
}

// readForm reads a Query call's parameters: the URL's, and a form body's,
// which take precedence. It keeps the body for signature checks and sets
// r.Form and r.PostForm, so nothing downstream reads the body again.
func readForm(r *http.Request) (url.Values, []byte, error) {
	form := url.Values{}
	if r.URL.RawQuery != "" {
		var err error
		if form, err = url.ParseQuery(r.URL.RawQuery); err != nil {
			return nil, nil, err
		}
	}
	post := url.Values{}
	var body []byte
	if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
		var err error
		if body, err = awswire.ReadBody(r, maxForm); err != nil {
			return nil, nil, err
		}
		if isForm(r) {
			// The body is never written again, so the values can point
			// into it rather than into a copy.
			if post, err = url.ParseQuery(unsafe.String(unsafe.SliceData(body), len(body))); err != nil {
				return nil, nil, err
			}
			for k, v := range form {
				post[k] = append(post[k], v...) // URL values come after the body's
			}
			form = post
		}
	}
	r.Form, r.PostForm = form, post
	return form, body, nil
}

// formType is the Content-Type of a Query call; the SDKs add a charset.
const formType = "application/x-www-form-urlencoded"

func isForm(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == formType || ct == formType+"; charset=utf-8" {
		return true // what every SDK sends, without parsing it
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == formType
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
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
		// Credential=AKID/date/region/service/aws4_request: the fourth
		// field, cut out without splitting (this runs for every Query call).
		rest, _, _ := strings.Cut(auth[i+len("Credential="):], ",")
		ok := true
		for range 3 {
			if _, rest, ok = strings.Cut(rest, "/"); !ok {
				break
			}
		}
		if svc, _, _ := strings.Cut(rest, "/"); ok && (svc == "sqs" || svc == "sns") {
			return svc
		}
	}
	if sqsapi.IsAction(action) {
		return "sqs"
	}
	return "sns"
}
