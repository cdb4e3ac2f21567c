package delivery

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// lambdaEndpoint invokes Lambda functions through HTTP hooks that speak the
// Lambda Invoke API, such as the Runtime Interface Emulator or sam local
// start-lambda: Options.Lambda maps a function name to its URL. The payload
// is the SNS event Lambda hands to a function. A 2xx answer without
// X-Amz-Function-Error is success; throttling (429), 5xx, function errors,
// timeouts and refused connections are retried on the Lambda schedule; a
// function fanout has no URL for, or a 4xx answer, is a client-side error.
// https://docs.aws.amazon.com/lambda/latest/dg/with-sns.html
type lambdaEndpoint struct{}

func (lambdaEndpoint) remote(*Dispatcher) bool { return true }

func (lambdaEndpoint) attempt(d *Dispatcher, j *job) result {
	if j.msg == nil {
		return clientErr("Lambda endpoints take no %s", j.ctl.Type)
	}
	name := lambdaFunction(j.sub.Endpoint)
	base, found := d.lambdas.url(name)
	if !found {
		return clientErr("function %s not found: start fanout with --lambda %s=URL", name, name)
	}
	event, err := d.lambdaEvent(j.msg, j.sub)
	if err != nil {
		return serverErr("%v", err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return d.post(InvokeURL(base, name), h, event, lambdaVerdict)
}

func lambdaVerdict(resp *http.Response) result {
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		if fe := resp.Header.Get("X-Amz-Function-Error"); fe != "" {
			return serverErr("function error: %s", fe)
		}
		return ok()
	case code == http.StatusTooManyRequests || code >= 500:
		return serverErr("HTTP %d", code)
	case code >= 400:
		return clientErr("HTTP %d", code)
	}
	return serverErr("HTTP %d", code)
}

// lambdaFunction returns the function name of a Lambda ARN
// (arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]).
func lambdaFunction(arn string) string {
	parts := strings.Split(arn, ":")
	if len(parts) >= 7 && parts[5] == "function" {
		return parts[6]
	}
	return arn
}

// InvokeURL is where a function's hook is invoked: base itself when it has a
// path, else base plus the Invoke API's path for the function.
func InvokeURL(base, function string) string {
	u, err := url.Parse(base)
	if err == nil && (u.Path == "" || u.Path == "/") {
		return strings.TrimRight(base, "/") + "/2015-03-31/functions/" + url.PathEscape(function) + "/invocations"
	}
	return base
}

// The SNS event Lambda passes to a function. Note AWS's spelling of
// SigningCertUrl and UnsubscribeUrl here, unlike the envelope's.
type lambdaEventJSON struct {
	Records []lambdaRecordJSON `json:"Records"`
}

type lambdaRecordJSON struct {
	EventSource          string        `json:"EventSource"`
	EventVersion         string        `json:"EventVersion"`
	EventSubscriptionArn string        `json:"EventSubscriptionArn"`
	Sns                  lambdaSNSJSON `json:"Sns"`
}

type lambdaSNSJSON struct {
	Type              string                         `json:"Type"`
	MessageID         string                         `json:"MessageId"`
	TopicArn          string                         `json:"TopicArn"`
	Subject           *string                        `json:"Subject"`
	Message           string                         `json:"Message"`
	Timestamp         string                         `json:"Timestamp"`
	SignatureVersion  string                         `json:"SignatureVersion"`
	Signature         string                         `json:"Signature"`
	SigningCertURL    string                         `json:"SigningCertUrl"`
	UnsubscribeURL    string                         `json:"UnsubscribeUrl"`
	MessageAttributes map[string]lambdaAttributeJSON `json:"MessageAttributes"`
}

type lambdaAttributeJSON struct {
	Type  string `json:"Type"`
	Value string `json:"Value"`
}

// lambdaEvent renders the event: Subject null when absent, MessageAttributes
// {} when there are none, signed like the envelope.
func (d *Dispatcher) lambdaEvent(m *Message, sub Subscriber) (string, error) {
	text := m.For(sub.Protocol)
	sig, cert, err := d.sign(m, text)
	if err != nil {
		return "", err
	}
	s := lambdaSNSJSON{
		Type: TypeNotification, MessageID: m.ID, TopicArn: m.TopicArn, Message: text,
		Timestamp: m.Timestamp.UTC().Format(TimeFormat), SignatureVersion: m.SignatureVersion,
		Signature: sig, SigningCertURL: cert, UnsubscribeURL: d.opts.Links.UnsubscribeURL(sub.Arn),
		MessageAttributes: make(map[string]lambdaAttributeJSON, len(m.Attributes)),
	}
	if m.Subject != "" {
		subject := m.Subject
		s.Subject = &subject
	}
	for _, a := range m.Attributes {
		s.MessageAttributes[a.Name] = lambdaAttributeJSON{Type: a.DataType, Value: attributeText(a)}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err = enc.Encode(lambdaEventJSON{Records: []lambdaRecordJSON{{
		EventSource: "aws:sns", EventVersion: "1.0", EventSubscriptionArn: sub.Arn, Sns: s,
	}}})
	return strings.TrimSuffix(b.String(), "\n"), err
}
