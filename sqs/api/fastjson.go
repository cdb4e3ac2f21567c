package api

import (
	"encoding/base64"

	"github.com/fanout/fanout/internal/awswire"
)

// jsonAppender is implemented by the replies of the hot actions, which are
// written by hand instead of through encoding/json. Each writes the members
// of the reply object it is handed (already opened).
type jsonAppender interface {
	appendJSON(o *awswire.JSONObject)
}

func (r sendReply) appendJSON(o *awswire.JSONObject) {
	o.String("MD5OfMessageBody", r.MD5OfMessageBody)
	if r.MD5OfMessageAttributes != "" {
		o.String("MD5OfMessageAttributes", r.MD5OfMessageAttributes)
	}
	if r.MD5OfMessageSystemAttributes != "" {
		o.String("MD5OfMessageSystemAttributes", r.MD5OfMessageSystemAttributes)
	}
	o.String("MessageId", r.MessageID)
	if r.SequenceNumber != "" {
		o.String("SequenceNumber", r.SequenceNumber)
	}
}

func appendBatchErrors(o *awswire.JSONObject, fs []batchError) {
	o.OpenArray("Failed")
	for _, f := range fs {
		o.Item()
		o.Open()
		o.String("Id", f.ID)
		o.Bool("SenderFault", f.SenderFault)
		o.String("Code", f.Code)
		if f.Message != "" {
			o.String("Message", f.Message)
		}
		o.Close()
	}
	o.CloseArray()
}

func (r sendBatchReply) appendJSON(o *awswire.JSONObject) {
	o.OpenArray("Successful")
	for _, e := range r.ok {
		o.Item()
		o.Open()
		o.String("Id", e.ID)
		newSendReply(e.SendResult).appendJSON(o)
		o.Close()
	}
	o.CloseArray()
	appendBatchErrors(o, r.failed)
}

func (r idBatchReply) appendJSON(o *awswire.JSONObject) {
	o.OpenArray("Successful")
	for _, e := range r.Successful {
		o.Item()
		o.Open()
		o.String("Id", e.ID)
		o.Close()
	}
	o.CloseArray()
	appendBatchErrors(o, r.Failed)
}

func (r receiveReply) appendJSON(o *awswire.JSONObject) {
	if len(r) == 0 {
		return // AWS answers {} when nothing was received
	}
	o.OpenArray("Messages")
	for _, m := range r {
		o.Item()
		o.Open()
		o.String("MessageId", m.MessageID)
		o.String("ReceiptHandle", m.ReceiptHandle)
		o.String("MD5OfBody", m.MD5OfBody)
		o.String("Body", m.Body)
		if len(m.Attributes) > 0 {
			o.Key("Attributes")
			o.Open()
			for _, a := range m.Attributes {
				o.String(a.Name, a.Value)
			}
			o.Close()
		}
		if m.MD5OfAttrs != "" {
			o.String("MD5OfMessageAttributes", m.MD5OfAttrs)
		}
		if len(m.MessageAttributes) > 0 {
			o.Key("MessageAttributes")
			o.Open()
			for _, a := range m.MessageAttributes {
				o.Key(a.Name)
				o.Open()
				if a.BinaryValue != nil {
					o.String("BinaryValue", base64.StdEncoding.EncodeToString(a.BinaryValue))
				} else {
					o.String("StringValue", a.StringValue)
				}
				o.String("DataType", a.DataType)
				o.Close()
			}
			o.Close()
		}
		o.Close()
	}
	o.CloseArray()
}
