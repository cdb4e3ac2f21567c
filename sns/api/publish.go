package api

import (
	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/sns"
)

// publishInput reads the members Publish and PublishBatch entries share.
func publishInput(f awswire.Form) (sns.PublishInput, error) {
	attrs, err := messageAttributesParam(f)
	if err != nil {
		return sns.PublishInput{}, err
	}
	return sns.PublishInput{
		Message:          optional(f, "Message"),
		Subject:          optional(f, "Subject"),
		MessageStructure: f.Get("MessageStructure"),
		Attributes:       attrs,
		GroupID:          f.Get("MessageGroupId"),
		DedupID:          f.Get("MessageDeduplicationId"),
	}, nil
}

func (h *Handler) publish(r *request) (result, error) {
	in, err := publishInput(r.f)
	if err != nil {
		return nil, err
	}
	in.TopicArn, in.TargetArn, in.PhoneNumber = r.f.Get("TopicArn"), r.f.Get("TargetArn"), r.f.Get("PhoneNumber")
	res, err := h.engine.Publish(in)
	if err != nil {
		return nil, err
	}
	return func(x *awswire.XMLWriter) {
		x.Elem("MessageId", res.MessageID)
		if res.SequenceNumber != "" {
			x.Elem("SequenceNumber", res.SequenceNumber)
		}
	}, nil
}

func (h *Handler) publishBatch(r *request) (result, error) {
	// The count first: decoding an entry scans the whole form, so thousands
	// of entries would cost quadratic work before the limit is checked.
	if err := sns.CheckBatchSize(len(r.f.Indexes("PublishBatchRequestEntries.member"))); err != nil {
		return nil, err
	}
	var entries []sns.BatchEntry
	for _, e := range r.f.Entries("PublishBatchRequestEntries.member") {
		in, err := publishInput(e)
		if err != nil {
			return nil, err
		}
		entries = append(entries, sns.BatchEntry{ID: e.Get("Id"), PublishInput: in})
	}
	ok, failed, err := h.engine.PublishBatch(r.f.Get("TopicArn"), entries)
	if err != nil {
		return nil, err
	}
	return func(x *awswire.XMLWriter) {
		x.Open("Successful")
		for _, s := range ok {
			x.Open("member")
			x.Elem("Id", s.ID)
			x.Elem("MessageId", s.MessageID)
			if s.SequenceNumber != "" {
				x.Elem("SequenceNumber", s.SequenceNumber)
			}
			x.Close("member")
		}
		x.Close("Successful")
		x.Open("Failed")
		for _, f := range failed {
			x.Open("member")
			x.Elem("Id", f.ID)
			x.Elem("Code", f.Code)
			x.Elem("Message", f.Message)
			x.Bool("SenderFault", f.SenderFault)
			x.Close("member")
		}
		x.Close("Failed")
	}, nil
}
