package api

import "github.com/fanout/fanout/internal/awswire"

func (h *Handler) createTopic(r *request) (result, error) {
	t, err := h.engine.CreateTopic(r.f.Get("Name"), attributesParam(r.f), tagsParam(r.f))
	if err != nil {
		return nil, err
	}
	arn := t.Arn()
	return func(x *awswire.XMLWriter) { x.Elem("TopicArn", arn) }, nil
}

func (h *Handler) deleteTopic(r *request) (result, error) {
	return nil, h.engine.DeleteTopic(r.f.Get("TopicArn"))
}

func (h *Handler) listTopics(r *request) (result, error) {
	arns, next, err := h.engine.ListTopics(r.f.Get("NextToken"))
	if err != nil {
		return nil, err
	}
	return func(x *awswire.XMLWriter) {
		x.Open("Topics")
		for _, a := range arns {
			x.Open("member")
			x.Elem("TopicArn", a)
			x.Close("member")
		}
		x.Close("Topics")
		if next != "" {
			x.Elem("NextToken", next)
		}
	}, nil
}

func (h *Handler) getTopicAttributes(r *request) (result, error) {
	m, err := h.engine.TopicAttributes(r.f.Get("TopicArn"))
	if err != nil {
		return nil, err
	}
	return func(x *awswire.XMLWriter) { attributes(x, m) }, nil
}

func (h *Handler) setTopicAttributes(r *request) (result, error) {
	return nil, h.engine.SetTopicAttribute(r.f.Get("TopicArn"), r.f.Get("AttributeName"), r.f.Get("AttributeValue"))
}

func (h *Handler) tagResource(r *request) (result, error) {
	if err := h.engine.TagResource(r.f.Get("ResourceArn"), tagsParam(r.f)); err != nil {
		return nil, err
	}
	return empty, nil
}

func (h *Handler) untagResource(r *request) (result, error) {
	if err := h.engine.UntagResource(r.f.Get("ResourceArn"), r.f.List("TagKeys.member")); err != nil {
		return nil, err
	}
	return empty, nil
}

func (h *Handler) listTagsForResource(r *request) (result, error) {
	tags, err := h.engine.ListTags(r.f.Get("ResourceArn"))
	if err != nil {
		return nil, err
	}
	return func(x *awswire.XMLWriter) {
		x.Open("Tags")
		for _, t := range tags {
			x.Open("member")
			x.Elem("Key", t.Key)
			x.Elem("Value", t.Value)
			x.Close("member")
		}
		x.Close("Tags")
	}, nil
}

func (h *Handler) addPermission(r *request) (result, error) {
	return nil, h.engine.AddPermission(r.f.Get("TopicArn"), r.f.Get("Label"),
		r.f.List("AWSAccountId.member"), r.f.List("ActionName.member"))
}

func (h *Handler) removePermission(r *request) (result, error) {
	return nil, h.engine.RemovePermission(r.f.Get("TopicArn"), r.f.Get("Label"))
}
