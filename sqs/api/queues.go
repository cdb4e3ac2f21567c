package api

import (
	"encoding/base64"
	"net/url"
	"sort"
	"strings"

	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/sqs"
)

// queueURL builds the URL a client should use for name, in the handler's
// URL style (see URLStyle); by default from the host it called us on:
// http://<host>/<account>/<name>.
func (h *Handler) queueURL(r *request, name string) string {
	host := r.host
	if host == "" {
		host = "localhost:4566"
	}
	scheme := "http://"
	if r.tls {
		scheme = "https://"
	}
	e := r.engine
	switch h.urlStyle {
	case URLStandard, URLDomain:
		port := "4566"
		if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
			port = host[i+1:]
		}
		if h.urlStyle == URLStandard {
			host = "sqs." + e.Region() + ".localhost.localstack.cloud:" + port
		} else {
			host = e.Region() + ".queue.localhost.localstack.cloud:" + port
		}
	case URLPath:
		return scheme + host + "/queue/" + e.Region() + "/" + e.Account() + "/" + name
	}
	return scheme + host + "/" + e.Account() + "/" + name
}

// URL styles: the shapes of the queue URLs fanout returns, after
// LocalStack's SQS_ENDPOINT_STRATEGY. Every shape is accepted as input
// whatever the style.
const (
	URLHost     = ""         // http://<Host header>/<account>/<name> (default)
	URLStandard = "standard" // http://sqs.<region>.localhost.localstack.cloud:<port>/<account>/<name>
	URLDomain   = "domain"   // http://<region>.queue.localhost.localstack.cloud:<port>/<account>/<name>
	URLPath     = "path"     // http://<Host header>/queue/<region>/<account>/<name>
)

// WithURLStyle sets the shape of the queue URLs the handler returns.
func (h *Handler) WithURLStyle(style string) *Handler {
	h.urlStyle = style
	return h
}

// queue resolves the QueueUrl parameter, or for the Query protocol a call
// POSTed to the queue's own path. Any host is accepted (sqs.<region>.amazonaws.com,
// localhost.localstack.cloud, ...): the last two path segments are the account
// and the name; /queue/<region>/<account>/<name> works too.
func (h *Handler) queue(r *request) (*sqs.Queue, error) {
	raw := r.in.str("QueueUrl")
	path := ""
	switch {
	case raw != "":
		var ok bool
		if path, ok = urlPath(raw); !ok {
			return nil, sqs.ErrInvalidAddress.New("The address %s is not valid for this endpoint.", raw)
		}
	case r.query && strings.Count(strings.Trim(r.path, "/"), "/") >= 1:
		path = r.path
	default:
		return nil, sqs.ErrMissingParameter.New("The request must contain the parameter QueueUrl.")
	}
	last, n := pathTail(strings.Trim(path, "/"))
	if n < 2 {
		return nil, sqs.ErrInvalidAddress.New("The address %s is not valid for this endpoint.", raw)
	}
	account, name := last[1], last[0]
	region := ""
	if n >= 4 && last[3] == "queue" {
		region = last[2] // LocalStack's path form: /queue/<region>/<account>/<name>
	} else if raw != "" {
		region = urlRegion(raw)
	}
	if err := h.into(r, account, region); err != nil {
		return nil, err
	}
	q, err := r.engine.Queue(name)
	if err != nil {
		return nil, err
	}
	return q, h.authorized(r, q)
}

// authorized asks the authorizer about a call that r's resolution took to
// another account's engine (q may be nil: see Authorizer).
func (h *Handler) authorized(r *request, q *sqs.Queue) error {
	if h.authorize == nil || r.engine.Account() == h.engine.Account() {
		return nil
	}
	return h.authorize(r.op, h.engine.Account(), r.engine, q)
}

// into points r at the engine of account and region (region "" is r's):
// r's own, or with a lookup another one. A namespace with no engine has no
// queues.
func (h *Handler) into(r *request, account, region string) error {
	if region == "" || h.lookup == nil {
		region = r.engine.Region() // a single engine serves every region, as before namespaces
	}
	if account == r.engine.Account() && region == r.engine.Region() {
		return nil
	}
	if h.lookup == nil {
		return sqs.QueueDoesNotExist() // a queue of another account does not exist here
	}
	e := h.lookup(account, region)
	if e == nil {
		return sqs.QueueDoesNotExist()
	}
	r.engine = e
	return nil
}

// intoArn points r at the engine of the account and region a queue ARN
// names; a malformed ARN is left to the engine to refuse.
func (h *Handler) intoArn(r *request, arn string) error {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" {
		return nil
	}
	if err := h.into(r, parts[4], parts[3]); err != nil {
		return sqs.ErrResourceNotFound.New("The resource that you specified for the SourceArn parameter doesn't exist.")
	}
	q, _ := r.engine.Queue(parts[5])
	return h.authorized(r, q)
}

// urlRegion is the region a queue URL's host names: sqs.<region>.<domain>
// (AWS's and LocalStack's standard form) or <region>.queue.<domain>
// (LocalStack's domain form); "" for any other host.
func urlRegion(raw string) string {
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexAny(rest, "/:"); i >= 0 {
		rest = rest[:i]
	}
	// The first two of at least three labels.
	first, rest, ok := strings.Cut(rest, ".")
	second, _, three := strings.Cut(rest, ".")
	if !ok || !three {
		return ""
	}
	if first == "sqs" && IsRegion(second) {
		return second
	}
	if second == "queue" && IsRegion(first) {
		return first
	}
	return ""
}

// pathTail returns the last four (or fewer) of p's slash-separated
// segments, the last first, and how many segments p has: a queue URL's
// path is read on every call, so it is cut without allocating.
func pathTail(p string) (last [4]string, n int) {
	for {
		i := strings.LastIndexByte(p, '/')
		if n < len(last) {
			last[n] = p[i+1:]
		}
		n++
		if i < 0 {
			return last, n
		}
		p = p[:i]
	}
}

// IsRegion reports whether s has the shape of an AWS region name:
// letters, dashes, a final number (us-east-1, us-gov-west-1, eu-central-2).
// Every call's credential scope is checked, so it cuts without allocating.
func IsRegion(s string) bool {
	if len(s) > 32 || strings.Count(s, "-") < 2 {
		return false
	}
	for rest, more := s, true; more; {
		var p string
		p, rest, more = strings.Cut(rest, "-")
		if p == "" {
			return false
		}
		for _, c := range []byte(p) {
			digit := c >= '0' && c <= '9'
			if !more && !digit || more && !(c >= 'a' && c <= 'z') {
				return false
			}
		}
	}
	return true
}

// urlPath returns the path of a queue URL. http(s)://host/path, the shape
// every client sends, is cut apart by hand: url.Parse costs more than the
// rest of a DeleteMessage.
func urlPath(raw string) (string, bool) {
	for _, scheme := range []string{"http://", "https://"} {
		if rest, ok := strings.CutPrefix(raw, scheme); ok && !strings.ContainsAny(rest, "?#%") {
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				return rest[i:], true
			}
			return "", true
		}
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Path == "" && !strings.Contains(raw, "/")) {
		return "", false
	}
	return u.Path, true
}

type queueURLReply struct {
	QueueURL string `json:"QueueUrl"`
}

func (r queueURLReply) json() any                { return r }
func (r queueURLReply) xml(x *awswire.XMLWriter) { x.Elem("QueueUrl", r.QueueURL) }

func (h *Handler) createQueue(r *request) (reply, error) {
	name := r.in.str("QueueName")
	attrs := r.in.strMap("Attributes", "Attribute", "Name", "Value")
	tags := r.in.strMap("tags", "Tag", "Key", "Value")
	q, err := r.engine.CreateQueue(name, attrs, tags)
	if err != nil {
		return nil, err
	}
	return queueURLReply{h.queueURL(r, q.Name())}, nil
}

func (h *Handler) deleteQueue(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	return nil, r.engine.DeleteQueue(q.Name())
}

func (h *Handler) getQueueURL(r *request) (reply, error) {
	name := r.in.str("QueueName")
	if name == "" {
		return nil, sqs.ErrMissingParameter.New("The request must contain the parameter QueueName.")
	}
	if owner := r.in.str("QueueOwnerAWSAccountId"); owner != "" {
		if err := h.into(r, owner, ""); err != nil {
			return nil, err
		}
	}
	q, err := r.engine.Queue(name)
	if err != nil {
		return nil, err
	}
	if err := h.authorized(r, q); err != nil {
		return nil, err
	}
	return queueURLReply{h.queueURL(r, q.Name())}, nil
}

type urlListReply struct {
	jsonKey   string
	URLs      []string
	NextToken string
}

func (r urlListReply) json() any {
	out := map[string]any{}
	if len(r.URLs) > 0 {
		out[r.jsonKey] = r.URLs
	}
	if r.NextToken != "" {
		out["NextToken"] = r.NextToken
	}
	return out
}

func (r urlListReply) xml(x *awswire.XMLWriter) {
	for _, u := range r.URLs {
		x.Elem("QueueUrl", u)
	}
	if r.NextToken != "" {
		x.Elem("NextToken", r.NextToken)
	}
}

// page applies MaxResults and NextToken to sorted names. The token is the
// last name of the previous page, opaque to clients.
func page(names []string, r *request) ([]string, string, error) {
	max, err := r.in.integer("MaxResults")
	if err != nil {
		return nil, "", err
	}
	if max != nil && (*max < 1 || *max > 1000) {
		return nil, "", sqs.ErrInvalidParameterValue.New("Value %d for parameter MaxResults is invalid. Reason: MaxResults must be an integer between 1 and 1000.", *max)
	}
	if tok := r.in.str("NextToken"); tok != "" {
		after, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			return nil, "", sqs.ErrInvalidParameterValue.New("Invalid NextToken value.")
		}
		i := sort.SearchStrings(names, string(after)+"\x00")
		names = names[i:]
	}
	limit := 1000
	if max != nil {
		limit = *max
	}
	next := ""
	if len(names) > limit {
		names = names[:limit]
		if max != nil { // without MaxResults AWS returns up to 1000 and no token
			next = base64.RawURLEncoding.EncodeToString([]byte(names[limit-1]))
		}
	}
	return names, next, nil
}

func (h *Handler) listQueues(r *request) (reply, error) {
	names, next, err := page(r.engine.ListQueues(r.in.str("QueueNamePrefix")), r)
	if err != nil {
		return nil, err
	}
	out := urlListReply{jsonKey: "QueueUrls", NextToken: next}
	for _, n := range names {
		out.URLs = append(out.URLs, h.queueURL(r, n))
	}
	return out, nil
}

func (h *Handler) listDeadLetterSourceQueues(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	all, err := r.engine.DeadLetterSourceQueues(q.Name())
	if err != nil {
		return nil, err
	}
	names, next, err := page(all, r)
	if err != nil {
		return nil, err
	}
	out := urlListReply{jsonKey: "queueUrls", NextToken: next}
	out.URLs = []string{}
	for _, n := range names {
		out.URLs = append(out.URLs, h.queueURL(r, n))
	}
	return out, nil
}

type attributesReply []sqs.Attribute

func (r attributesReply) json() any {
	out := map[string]any{}
	if len(r) > 0 {
		m := make(map[string]string, len(r))
		for _, a := range r {
			m[a.Name] = a.Value
		}
		out["Attributes"] = m
	}
	return out
}

func (r attributesReply) xml(x *awswire.XMLWriter) {
	for _, a := range r {
		x.Open("Attribute")
		x.Elem("Name", a.Name)
		x.Elem("Value", a.Value)
		x.Close("Attribute")
	}
}

func (h *Handler) getQueueAttributes(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	attrs, err := q.Attributes(r.in.list("AttributeNames", "AttributeName"))
	if err != nil {
		return nil, err
	}
	return attributesReply(attrs), nil
}

func (h *Handler) setQueueAttributes(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	attrs := r.in.strMap("Attributes", "Attribute", "Name", "Value")
	if len(attrs) == 0 {
		return nil, sqs.ErrMissingParameter.New("The request must contain the parameter Attributes.")
	}
	return nil, q.SetAttributes(attrs)
}

func (h *Handler) purgeQueue(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	return nil, q.Purge()
}

type tagsReply map[string]string

func (r tagsReply) json() any {
	if len(r) == 0 {
		return struct{}{}
	}
	return map[string]any{"Tags": map[string]string(r)}
}

func (r tagsReply) xml(x *awswire.XMLWriter) {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		x.Open("Tag")
		x.Elem("Key", k)
		x.Elem("Value", r[k])
		x.Close("Tag")
	}
}

func (h *Handler) tagQueue(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	return nil, q.Tag(r.in.strMap("Tags", "Tag", "Key", "Value"))
}

func (h *Handler) untagQueue(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	return nil, q.Untag(r.in.list("TagKeys", "TagKey"))
}

func (h *Handler) listQueueTags(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	return tagsReply(q.Tags()), nil
}

func (h *Handler) addPermission(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	return nil, q.AddPermission(r.in.str("Label"), r.in.list("AWSAccountIds", "AWSAccountId"), r.in.list("Actions", "ActionName"))
}

func (h *Handler) removePermission(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	return nil, q.RemovePermission(r.in.str("Label"))
}
