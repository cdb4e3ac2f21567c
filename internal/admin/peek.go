package admin

import (
	"encoding/base64"
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/fanout/fanout/sqs"
)

// peekedMessage is a message as GET /_fanout/sqs/queues/{name}/messages
// shows it. Attributes use the shapes of the AWS CLI's JSON.
type peekedMessage struct {
	MessageID              string                   `json:"messageId"`
	Body                   string                   `json:"body"`
	MD5OfBody              string                   `json:"md5OfBody"`
	Attributes             map[string]attributeJSON `json:"attributes"`
	MD5OfMessageAttributes string                   `json:"md5OfMessageAttributes,omitempty"`
	SystemAttributes       map[string]string        `json:"systemAttributes"`
	ReceiveCount           int                      `json:"receiveCount"`
	State                  string                   `json:"state"`
	// StateEnds is when a delayed or in-flight message becomes visible.
	StateEnds *time.Time `json:"stateEnds,omitempty"`
	Sent      time.Time  `json:"sent"`
	Expires   time.Time  `json:"expires"`
}

func toPeeked(m sqs.PeekedMessage) peekedMessage {
	p := peekedMessage{
		MessageID: m.MessageID, Body: m.Body, MD5OfBody: m.MD5OfBody, MD5OfMessageAttributes: m.MD5OfMessageAttributes,
		Attributes: map[string]attributeJSON{}, SystemAttributes: map[string]string{},
		ReceiveCount: m.ReceiveCount, State: string(m.State), Sent: m.SentAt, Expires: m.ExpiresAt,
	}
	for _, a := range m.MessageAttributes {
		v := attributeJSON{DataType: a.DataType, StringValue: a.StringValue}
		if a.BinaryValue != nil {
			v.BinaryValue = base64.StdEncoding.EncodeToString(a.BinaryValue)
		}
		p.Attributes[a.Name] = v
	}
	for _, a := range m.Attributes {
		p.SystemAttributes[a.Name] = a.Value
	}
	if !m.StateEnds.IsZero() {
		t := m.StateEnds
		p.StateEnds = &t
	}
	return p
}

// peek lists a queue's messages without changing anything:
// ?state=visible,inflight,delayed (default all) &limit=N (default 100, at
// most 1000).
func (d Deps) peek(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	states, err := sqs.ParseMessageStates(q.Get("state"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "state: "+q.Get("state")+" is not a comma list of visible, inflight and delayed")
		return
	}
	limit, err := intParam(q, "limit", sqs.DefaultPeekLimit, sqs.MaxPeekLimit)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if limit == 0 {
		writeError(w, http.StatusBadRequest, "limit: 0 would list nothing; use 1 to 1000")
		return
	}
	name := mux.Vars(r)["name"]
	_, ns, err := d.queueOf(q, name)
	var bad badRequest
	if errors.As(err, &bad) {
		writeError(w, http.StatusBadRequest, bad.msg)
		return
	}
	var page sqs.PeekResult
	if err == nil {
		page, err = ns.SQS.Peek(name, sqs.PeekOptions{States: states, Limit: limit})
	}
	if err != nil {
		writeError(w, http.StatusNotFound, "no queue named "+name)
		return
	}
	out := make([]peekedMessage, 0, len(page.Messages))
	for _, m := range page.Messages {
		out = append(out, toPeeked(m))
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": out, "more": page.More})
}
