package api

import (
	"sync"

	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/sqs"
)

// sendInput decodes the members SendMessage and a SendMessageBatch entry share.
func sendInput(in input, senderID string) (sqs.SendInput, error) {
	delay, err := in.integer("DelaySeconds")
	if err != nil {
		return sqs.SendInput{}, err
	}
	// The count is checked before any attribute is decoded.
	if err := sqs.CheckAttributeCount(in.size("MessageAttributes", "MessageAttribute")); err != nil {
		return sqs.SendInput{}, err
	}
	attrs, err := in.msgAttrs("MessageAttributes", "MessageAttribute")
	if err != nil {
		return sqs.SendInput{}, err
	}
	sys, err := in.msgAttrs("MessageSystemAttributes", "MessageSystemAttribute")
	if err != nil {
		return sqs.SendInput{}, err
	}
	return sqs.SendInput{
		Body:             in.str("MessageBody"),
		BodyChecked:      in.plain("MessageBody"),
		DelaySeconds:     delay,
		Attributes:       attrs,
		SystemAttributes: sys,
		GroupID:          in.str("MessageGroupId"),
		DeduplicationID:  in.str("MessageDeduplicationId"),
		SenderID:         senderID,
	}, nil
}

type sendReply struct {
	MD5OfMessageBody             string `json:"MD5OfMessageBody"`
	MD5OfMessageAttributes       string `json:"MD5OfMessageAttributes,omitempty"`
	MD5OfMessageSystemAttributes string `json:"MD5OfMessageSystemAttributes,omitempty"`
	MessageID                    string `json:"MessageId"`
	SequenceNumber               string `json:"SequenceNumber,omitempty"`
}

func newSendReply(r sqs.SendResult) sendReply {
	return sendReply{r.MD5OfBody, r.MD5OfAttrs, r.MD5OfSysAttrs, r.MessageID, r.SequenceNumber}
}

func (r sendReply) json() any { return r }

func (r sendReply) xml(x *awswire.XMLWriter) {
	x.Elem("MD5OfMessageBody", r.MD5OfMessageBody)
	if r.MD5OfMessageAttributes != "" {
		x.Elem("MD5OfMessageAttributes", r.MD5OfMessageAttributes)
	}
	if r.MD5OfMessageSystemAttributes != "" {
		x.Elem("MD5OfMessageSystemAttributes", r.MD5OfMessageSystemAttributes)
	}
	x.Elem("MessageId", r.MessageID)
	if r.SequenceNumber != "" {
		x.Elem("SequenceNumber", r.SequenceNumber)
	}
}

func (h *Handler) sendMessage(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	in, err := sendInput(r.in, r.senderID)
	if err != nil {
		return nil, err
	}
	res, err := q.Send(in)
	if err != nil {
		return nil, err
	}
	return newSendReply(res), nil
}

type batchError struct {
	ID          string `json:"Id"`
	SenderFault bool   `json:"SenderFault"`
	Code        string `json:"Code"`
	Message     string `json:"Message,omitempty"`
}

func batchErrors(fs []sqs.BatchFailure) []batchError {
	out := make([]batchError, len(fs))
	for i, f := range fs {
		out[i] = batchError{f.ID, f.SenderFault, f.Code, f.Message}
	}
	return out
}

func writeBatchErrors(x *awswire.XMLWriter, fs []batchError) {
	for _, f := range fs {
		x.Open("BatchResultErrorEntry")
		x.Elem("Id", f.ID)
		x.Bool("SenderFault", f.SenderFault)
		x.Elem("Code", f.Code)
		if f.Message != "" {
			x.Elem("Message", f.Message)
		}
		x.Close("BatchResultErrorEntry")
	}
}

type sendBatchEntry struct {
	ID string `json:"Id"`
	sendReply
}

// sendBatchReply renders the engine's results as they are: a reply is
// written once, so copying them into reply structs would only cost.
type sendBatchReply struct {
	ok      []sqs.SendBatchResult
	failed  []batchError
	scratch *sendBatchScratch // where ok is, given back once the reply is written
}

// sendBatchScratch is one SendMessageBatch call's results and its reply,
// reused across calls: ten results with their ids and digests are 1.6 KB
// of garbage a call otherwise, a twentieth of a 64-byte batch's CPU.
type sendBatchScratch struct {
	buf   sqs.SendBatchBuffer
	reply sendBatchReply
}

var sendBatchScratches = sync.Pool{New: func() any { return new(sendBatchScratch) }}

// release gives the scratch back; the reply's strings are not read again.
func (r *sendBatchReply) release() {
	s := r.scratch
	s.buf.Reset()
	s.reply = sendBatchReply{}
	sendBatchScratches.Put(s)
}

func (r sendBatchReply) json() any {
	out := struct {
		Successful []sendBatchEntry `json:"Successful"`
		Failed     []batchError     `json:"Failed"`
	}{make([]sendBatchEntry, len(r.ok)), r.failed}
	for i, s := range r.ok {
		out.Successful[i] = sendBatchEntry{s.ID, newSendReply(s.SendResult)}
	}
	return out
}

func (r sendBatchReply) xml(x *awswire.XMLWriter) {
	for _, e := range r.ok {
		x.Open("SendMessageBatchResultEntry")
		x.Elem("Id", e.ID)
		newSendReply(e.SendResult).xml(x)
		x.Close("SendMessageBatchResultEntry")
	}
	writeBatchErrors(x, r.failed)
}

func (h *Handler) sendMessageBatch(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	if err := sqs.CheckBatchSize("SendMessageBatchRequestEntry", r.in.size("Entries", "SendMessageBatchRequestEntry")); err != nil {
		return nil, err
	}
	raw := r.in.entries("Entries", "SendMessageBatchRequestEntry")
	// At most 10 entries (checked above): these stay on the stack.
	var idBuf [10]string
	var entryBuf [10]sqs.SendBatchEntry
	ids, entries := idBuf[:0], entryBuf[:0]
	for _, e := range raw {
		ids = append(ids, e.str("Id"))
	}
	if err := sqs.CheckBatch("SendMessageBatchRequestEntry", ids); err != nil {
		return nil, err
	}
	var decodeFailed []sqs.BatchFailure
	for i, e := range raw {
		in, err := sendInput(e, r.senderID)
		if err != nil {
			decodeFailed = append(decodeFailed, sqs.Failure(ids[i], err))
			continue
		}
		entries = append(entries, sqs.SendBatchEntry{ID: ids[i], SendInput: in})
	}
	s := sendBatchScratches.Get().(*sendBatchScratch)
	ok, failed, err := q.SendBatchInto(&s.buf, entries)
	if err != nil {
		s.buf.Reset()
		sendBatchScratches.Put(s)
		return nil, err
	}
	s.reply = sendBatchReply{ok: ok, failed: batchErrors(append(decodeFailed, failed...)), scratch: s}
	return &s.reply, nil
}

type receiveReply []sqs.Received

type jsonAttr struct {
	StringValue string `json:"StringValue,omitempty"`
	BinaryValue []byte `json:"BinaryValue,omitempty"`
	DataType    string `json:"DataType"`
}

type jsonMessage struct {
	MessageID              string              `json:"MessageId"`
	ReceiptHandle          string              `json:"ReceiptHandle"`
	MD5OfBody              string              `json:"MD5OfBody"`
	Body                   string              `json:"Body"`
	Attributes             map[string]string   `json:"Attributes,omitempty"`
	MD5OfMessageAttributes string              `json:"MD5OfMessageAttributes,omitempty"`
	MessageAttributes      map[string]jsonAttr `json:"MessageAttributes,omitempty"`
}

func (r receiveReply) json() any {
	if len(r) == 0 {
		return struct{}{}
	}
	msgs := make([]jsonMessage, len(r))
	for i, m := range r {
		j := jsonMessage{MessageID: m.MessageID, ReceiptHandle: m.ReceiptHandle, MD5OfBody: m.MD5OfBody, Body: m.Body, MD5OfMessageAttributes: m.MD5OfAttrs}
		if len(m.Attributes) > 0 {
			j.Attributes = make(map[string]string, len(m.Attributes))
			for _, a := range m.Attributes {
				j.Attributes[a.Name] = a.Value
			}
		}
		if len(m.MessageAttributes) > 0 {
			j.MessageAttributes = make(map[string]jsonAttr, len(m.MessageAttributes))
			for _, a := range m.MessageAttributes {
				j.MessageAttributes[a.Name] = jsonAttr{a.StringValue, a.BinaryValue, a.DataType}
			}
		}
		msgs[i] = j
	}
	return map[string]any{"Messages": msgs}
}

func (r receiveReply) xml(x *awswire.XMLWriter) {
	for _, m := range r {
		x.Open("Message")
		x.Elem("MessageId", m.MessageID)
		x.Elem("ReceiptHandle", m.ReceiptHandle)
		x.Elem("MD5OfBody", m.MD5OfBody)
		x.Elem("Body", m.Body)
		for _, a := range m.Attributes {
			x.Open("Attribute")
			x.Elem("Name", a.Name)
			x.Elem("Value", a.Value)
			x.Close("Attribute")
		}
		if m.MD5OfAttrs != "" {
			x.Elem("MD5OfMessageAttributes", m.MD5OfAttrs)
		}
		for _, a := range m.MessageAttributes {
			x.MessageAttribute(a.Name, a.DataType, a.StringValue, a.BinaryValue)
		}
		x.Close("Message")
	}
}

func (h *Handler) receiveMessage(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	var in sqs.ReceiveInput
	if in.MaxNumberOfMessages, err = r.in.integer("MaxNumberOfMessages"); err != nil {
		return nil, err
	}
	if in.VisibilityTimeout, err = r.in.integer("VisibilityTimeout"); err != nil {
		return nil, err
	}
	if in.WaitTimeSeconds, err = r.in.integer("WaitTimeSeconds"); err != nil {
		return nil, err
	}
	in.SystemAttributeNames = append(r.in.list("AttributeNames", "AttributeName"), r.in.list("MessageSystemAttributeNames", "MessageSystemAttributeName")...)
	in.MessageAttributeNames = r.in.list("MessageAttributeNames", "MessageAttributeName")
	in.AttemptID = r.in.str("ReceiveRequestAttemptId")
	msgs, err := q.Receive(r.ctx, in)
	if err != nil {
		return nil, err
	}
	return receiveReply(msgs), nil
}

func (h *Handler) deleteMessage(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	return nil, q.Delete(r.in.str("ReceiptHandle"))
}

func (h *Handler) changeMessageVisibility(r *request) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	t, err := r.in.integer("VisibilityTimeout")
	if err != nil {
		return nil, err
	}
	if t == nil {
		return nil, sqs.ErrMissingParameter.New("The request must contain the parameter VisibilityTimeout.")
	}
	return nil, q.ChangeVisibility(r.in.str("ReceiptHandle"), *t)
}

type idEntry struct {
	ID string `json:"Id"`
}

type idBatchReply struct {
	entry      string       // XML element of a successful entry
	Successful []idEntry    `json:"Successful"`
	Failed     []batchError `json:"Failed"`
}

func (r idBatchReply) json() any { return r }

func (r idBatchReply) xml(x *awswire.XMLWriter) {
	for _, e := range r.Successful {
		x.Open(r.entry)
		x.Elem("Id", e.ID)
		x.Close(r.entry)
	}
	writeBatchErrors(x, r.Failed)
}

// eachEntry runs do on the entries of a DeleteMessageBatch or
// ChangeMessageVisibilityBatch at once (one durable record for all), which
// returns each entry's outcome, and reports per-entry failures.
func (h *Handler) eachEntry(r *request, entryName, resultName string, do func(q *sqs.Queue, es []input) ([]error, error)) (reply, error) {
	q, err := h.queue(r)
	if err != nil {
		return nil, err
	}
	if err := sqs.CheckBatchSize(entryName, r.in.size("Entries", entryName)); err != nil {
		return nil, err
	}
	raw := r.in.entries("Entries", entryName)
	var idBuf [10]string // at most 10 entries (checked above)
	ids := idBuf[:0]
	for _, e := range raw {
		ids = append(ids, e.str("Id"))
	}
	if err := sqs.CheckBatch(entryName, ids); err != nil {
		return nil, err
	}
	out := idBatchReply{entry: resultName, Successful: make([]idEntry, 0, len(raw))}
	var failed []sqs.BatchFailure
	errs, err := do(q, raw)
	if err != nil {
		return nil, err
	}
	for i := range raw {
		if err := errs[i]; err != nil {
			failed = append(failed, sqs.Failure(ids[i], err))
			continue
		}
		out.Successful = append(out.Successful, idEntry{ids[i]})
	}
	out.Failed = batchErrors(failed)
	return out, nil
}

func (h *Handler) deleteMessageBatch(r *request) (reply, error) {
	return h.eachEntry(r, "DeleteMessageBatchRequestEntry", "DeleteMessageBatchResultEntry", func(q *sqs.Queue, es []input) ([]error, error) {
		handles := make([]string, len(es))
		for i, e := range es {
			handles[i] = e.str("ReceiptHandle")
		}
		return q.DeleteBatch(handles)
	})
}

func (h *Handler) changeMessageVisibilityBatch(r *request) (reply, error) {
	return h.eachEntry(r, "ChangeMessageVisibilityBatchRequestEntry", "ChangeMessageVisibilityBatchResultEntry", func(q *sqs.Queue, es []input) ([]error, error) {
		errs := make([]error, len(es))
		var changes []sqs.VisibilityChange
		var at []int // entry of each change
		for i, e := range es {
			t, err := e.integer("VisibilityTimeout")
			switch {
			case err != nil:
				errs[i] = err
			case t == nil:
				errs[i] = sqs.ErrMissingParameter.New("The request must contain the parameter VisibilityTimeout.")
			default:
				changes = append(changes, sqs.VisibilityChange{Handle: e.str("ReceiptHandle"), Timeout: *t})
				at = append(at, i)
			}
		}
		done, err := q.ChangeVisibilityBatch(changes)
		for k, err := range done {
			errs[at[k]] = err
		}
		return errs, err
	})
}
