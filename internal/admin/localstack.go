package admin

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"

	"github.com/gorilla/mux"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/internal/id"
	"github.com/fanout/fanout/sqs"
)

// LocalStack's developer endpoints, in the shapes its documentation shows,
// so that tests written against LocalStack keep working. They read and
// never change anything.
// https://docs.localstack.cloud/aws/services/sqs/ (Developer endpoints)
// https://docs.localstack.cloud/aws/services/sns/ (Developer endpoints)
func (d Deps) localstackRoutes(r *mux.Router) {
	r.HandleFunc("/_localstack/health", d.localstackHealth).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/_aws/sqs/messages", d.localstackMessages).Methods(http.MethodGet)
	r.HandleFunc("/_aws/sqs/messages/{region}/{account}/{queue}", d.localstackMessages).Methods(http.MethodGet)
	// A subscription ARN holds colons but no slash; {arn:.+} also takes
	// an escaped slash, which no ARN has, and then finds no subscription.
	r.HandleFunc("/_aws/sns/subscription-tokens/{arn:.+}", d.localstackToken).Methods(http.MethodGet)
	r.HandleFunc("/_aws/sns/sms-messages", d.localstackOutbox("sms", "phoneNumber", "sms_messages", smsRecord)).Methods(http.MethodGet)
	r.HandleFunc("/_aws/sns/platform-endpoint-messages", d.localstackOutbox("application", "endpointArn", "platform_endpoint_messages", pushRecord)).Methods(http.MethodGet)
}

// localstackHealth answers what LocalStack's health check does, for the
// services fanout runs.
func (d Deps) localstackHealth(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"services": map[string]string{"sqs": "running", "sns": "running"},
		"edition":  "fanout",
		"version":  Version,
	})
}

const sqsXMLNamespace = "http://queue.amazonaws.com/doc/2012-11-05/"

// backdoorHandle is the receipt handle LocalStack puts on peeked messages:
// it deletes nothing.
const backdoorHandle = "SQS/BACKDOOR/ACCESS"

// localstackMessages lists a queue's messages as a ReceiveMessage reply
// (XML, or JSON with Accept: application/json): the visible ones, and with
// ShowInvisible=true and ShowDelayed=true the in-flight and delayed ones,
// each then marked with the attributes IsVisible and IsDelayed.
func (d Deps) localstackMessages(w http.ResponseWriter, r *http.Request) {
	asJSON := strings.Contains(r.Header.Get("Accept"), "application/json")
	fail := func(e *awserr.Error) {
		rid := id.UUID()
		if asJSON {
			w.Header().Set("x-amzn-RequestId", rid)
			writeJSON(w, e.StatusFor(true), map[string]any{"ErrorResponse": map[string]any{
				"Error":     map[string]string{"Type": string(e.FaultOrSender()), "Code": e.QueryCodeOrCode(), "Message": e.MessageFor(true)},
				"RequestId": rid,
			}})
			return
		}
		awswire.WriteXMLError(w, rid, sqsXMLNamespace, e)
	}
	q := r.URL.Query()
	invisible, err1 := boolParam(q, "ShowInvisible", false)
	delayed, err2 := boolParam(q, "ShowDelayed", false)
	if err := firstErr(err1, err2); err != nil {
		fail(sqs.ErrInvalidParameterValue.New("%s", err.Error()))
		return
	}
	engine, name, e := d.localstackQueue(r)
	if e != nil {
		fail(e)
		return
	}
	states := []sqs.MessageState{sqs.MessageVisible}
	if invisible {
		states = append(states, sqs.MessageInflight)
	}
	if delayed {
		states = append(states, sqs.MessageDelayed)
	}
	page, err := engine.Peek(name, sqs.PeekOptions{States: states, Limit: sqs.MaxPeekLimit})
	if err != nil {
		var ae *awserr.Error
		if !asAWS(err, &ae) {
			ae = awserr.Internal.New("%v", err)
		}
		fail(ae)
		return
	}
	marks := invisible || delayed
	rid := id.UUID()
	if asJSON {
		msgs := make([]map[string]any, 0, len(page.Messages))
		for _, m := range page.Messages {
			msgs = append(msgs, localstackJSON(m, marks))
		}
		w.Header().Set("x-amzn-RequestId", rid)
		writeJSON(w, http.StatusOK, map[string]any{"ReceiveMessageResponse": map[string]any{
			"ReceiveMessageResult": map[string]any{"Message": msgs},
			"ResponseMetadata":     map[string]string{"RequestId": rid},
		}})
		return
	}
	awswire.WriteXML(w, rid, awswire.QueryResponse("ReceiveMessage", sqsXMLNamespace, rid, func(x *awswire.XMLWriter) {
		for _, m := range page.Messages {
			localstackXML(x, m, marks)
		}
	}))
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// localstackQueue finds the queue a request names, and the engine of its
// account and region: ?QueueUrl=… (its last two path segments are the
// account and the name; the region comes from an sqs.<region>. or
// <region>.queue. host or a /queue/<region>/ path, else the default) or
// the path form /_aws/sqs/messages/{region}/{account}/{queue}.
func (d Deps) localstackQueue(r *http.Request) (*sqs.Engine, string, *awserr.Error) {
	region, account, name := d.SQS.Region(), "", ""
	if v := mux.Vars(r); v["queue"] != "" {
		region, account, name = v["region"], v["account"], v["queue"]
	} else {
		raw := r.URL.Query().Get("QueueUrl")
		if raw == "" {
			return nil, "", sqs.ErrMissingParameter.New("The request must contain the parameter QueueUrl.")
		}
		u, err := url.Parse(raw)
		parts := strings.Split(strings.Trim(u.EscapedPath(), "/"), "/")
		if err != nil || len(parts) < 2 {
			return nil, "", sqs.ErrInvalidAddress.New("The address %s is not valid for this endpoint.", raw)
		}
		account, name = parts[len(parts)-2], parts[len(parts)-1]
		labels := strings.Split(u.Hostname(), ".")
		switch {
		case len(parts) >= 4 && parts[len(parts)-4] == "queue":
			region = parts[len(parts)-3]
		case len(labels) >= 3 && labels[0] == "sqs":
			region = labels[1]
		case len(labels) >= 3 && labels[1] == "queue":
			region = labels[0]
		}
	}
	engine := d.SQS
	if region != d.SQS.Region() || account != d.SQS.Account() {
		engine = nil
		if d.SQSOf != nil {
			engine = d.SQSOf(account, region)
		}
	}
	if engine == nil {
		return nil, "", sqs.QueueDoesNotExist().(*awserr.Error)
	}
	if _, err := engine.Queue(name); err != nil {
		return nil, "", sqs.QueueDoesNotExist().(*awserr.Error)
	}
	return engine, name, nil
}

func asAWS(err error, ae **awserr.Error) bool {
	e, ok := err.(*awserr.Error)
	if ok {
		*ae = e
	}
	return ok
}

// localstackAttrs are a peeked message's system attributes, plus
// IsVisible and IsDelayed when hidden messages were asked for.
func localstackAttrs(m sqs.PeekedMessage, marks bool) []sqs.Attribute {
	attrs := append([]sqs.Attribute(nil), m.Attributes...)
	if marks {
		attrs = append(attrs,
			sqs.Attribute{Name: "IsVisible", Value: boolText(m.State == sqs.MessageVisible)},
			sqs.Attribute{Name: "IsDelayed", Value: boolText(m.State == sqs.MessageDelayed)})
	}
	return attrs
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func localstackXML(x *awswire.XMLWriter, m sqs.PeekedMessage, marks bool) {
	x.Open("Message")
	x.Elem("MessageId", m.MessageID)
	x.Elem("ReceiptHandle", backdoorHandle)
	x.Elem("MD5OfBody", m.MD5OfBody)
	x.Elem("Body", m.Body)
	for _, a := range localstackAttrs(m, marks) {
		x.Open("Attribute")
		x.Elem("Name", a.Name)
		x.Elem("Value", a.Value)
		x.Close("Attribute")
	}
	if m.MD5OfMessageAttributes != "" {
		x.Elem("MD5OfMessageAttributes", m.MD5OfMessageAttributes)
	}
	for _, a := range m.MessageAttributes {
		x.MessageAttribute(a.Name, a.DataType, a.StringValue, a.BinaryValue)
	}
	x.Close("Message")
}

func localstackJSON(m sqs.PeekedMessage, marks bool) map[string]any {
	attrs := []map[string]string{}
	for _, a := range localstackAttrs(m, marks) {
		attrs = append(attrs, map[string]string{"Name": a.Name, "Value": a.Value})
	}
	out := map[string]any{
		"MessageId": m.MessageID, "ReceiptHandle": backdoorHandle, "MD5OfBody": m.MD5OfBody, "Body": m.Body,
		"Attribute": attrs,
	}
	if len(m.MessageAttributes) > 0 {
		out["MD5OfMessageAttributes"] = m.MD5OfMessageAttributes
		mas := []map[string]any{}
		for _, a := range m.MessageAttributes {
			v := map[string]string{"DataType": a.DataType}
			if a.BinaryValue != nil {
				v["BinaryValue"] = base64.StdEncoding.EncodeToString(a.BinaryValue)
			} else {
				v["StringValue"] = a.StringValue
			}
			mas = append(mas, map[string]any{"Name": a.Name, "Value": v})
		}
		out["MessageAttribute"] = mas
	}
	return out
}

// localstackToken answers a subscription's confirmation token.
func (d Deps) localstackToken(w http.ResponseWriter, r *http.Request) {
	arn := mux.Vars(r)["arn"]
	if !strings.HasPrefix(arn, "arn:") || strings.Count(arn, ":") != 6 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "not a subscription ARN: " + arn, "subscription_arn": arn})
		return
	}
	engine := d.SNS
	if region, account, _ := arnParts(arn); region != "" {
		if ns, ok := d.engineOf(account, region); ok {
			engine = ns.SNS
		}
	}
	token, err := engine.SubscriptionToken(arn)
	if err != nil || token == "" {
		msg := "no subscription " + arn
		if err == nil {
			msg = "subscription " + arn + " was confirmed at once (sqs, lambda, ... endpoints) and has no token"
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"error": msg, "subscription_arn": arn})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"subscription_token": token, "subscription_arn": arn})
}

// localstackOutbox lists the outbox of one protocol by endpoint, as
// LocalStack lists what it sent to phone numbers and platform endpoints.
// accountId and region (default fanout's) pick the namespace: what its
// topics sent, and for the default one also what was published straight
// to a phone number or endpoint (no topic says whose that was).
func (d Deps) localstackOutbox(protocol, param, key string, record func(delivery.OutboxEntry) map[string]any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		byEndpoint := map[string][]map[string]any{}
		account, region := q.Get("accountId"), q.Get("region")
		if account == "" {
			account = d.SNS.Account()
		}
		if region == "" {
			region = d.SNS.Region()
		}
		isDefault := account == d.SNS.Account() && region == d.SNS.Region()
		entries := d.Deliveries.Outbox(delivery.OutboxQuery{Protocol: protocol, Endpoint: q.Get(param)})
		for i := len(entries) - 1; i >= 0; i-- { // oldest first, as sent
			e := entries[i]
			if e.TopicArn == "" && isDefault || e.TopicArn != "" && delivery.InNamespace(e.TopicArn, account, region) {
				byEndpoint[e.Endpoint] = append(byEndpoint[e.Endpoint], record(e))
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{key: byEndpoint, "region": region})
	}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func smsRecord(e delivery.OutboxEntry) map[string]any {
	return map[string]any{
		"PhoneNumber": e.Endpoint, "TopicArn": nullable(e.TopicArn), "SubscriptionArn": nullable(e.SubscriptionArn),
		"MessageId": e.MessageID, "Message": e.Body, "MessageAttributes": map[string]any{},
		"MessageStructure": nil, "Subject": nullable(e.Subject),
	}
}

func pushRecord(e delivery.OutboxEntry) map[string]any {
	// The outbox holds the payload the platform got, already cut out of a
	// MessageStructure=json message, so there is no structure to report.
	return map[string]any{
		"TargetArn": e.Endpoint, "Message": e.Body, "MessageAttributes": nil,
		"MessageStructure": nil, "Subject": nullable(e.Subject), "MessageId": e.MessageID,
	}
}
