package api

import (
	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/sns"
)

func (h *Handler) subscribe(r *request) (result, error) {
	arn, err := h.engine.Subscribe(sns.SubscribeInput{
		TopicArn:              r.f.Get("TopicArn"),
		Protocol:              r.f.Get("Protocol"),
		Endpoint:              r.f.Get("Endpoint"),
		Attributes:            attributesParam(r.f),
		ReturnSubscriptionArn: boolParam(r.f, "ReturnSubscriptionArn"),
		Caller:                r.caller,
	})
	if err != nil {
		return nil, err
	}
	return subscriptionArn(arn), nil
}

func subscriptionArn(arn string) result {
	return func(x *awswire.XMLWriter) { x.Elem("SubscriptionArn", arn) }
}

func (h *Handler) confirmSubscription(r *request) (result, error) {
	arn, err := h.engine.ConfirmSubscription(r.f.Get("TopicArn"), r.f.Get("Token"),
		boolParam(r.f, "AuthenticateOnUnsubscribe"), r.signed)
	if err != nil {
		return nil, err
	}
	return subscriptionArn(arn), nil
}

func (h *Handler) unsubscribe(r *request) (result, error) {
	return nil, h.engine.Unsubscribe(r.f.Get("SubscriptionArn"))
}

func (h *Handler) listSubscriptions(r *request) (result, error) {
	subs, next, err := h.engine.ListSubscriptions(r.f.Get("NextToken"))
	if err != nil {
		return nil, err
	}
	return subscriptionList(subs, next), nil
}

func (h *Handler) listSubscriptionsByTopic(r *request) (result, error) {
	subs, next, err := h.engine.ListSubscriptionsByTopic(r.f.Get("TopicArn"), r.f.Get("NextToken"))
	if err != nil {
		return nil, err
	}
	return subscriptionList(subs, next), nil
}

func subscriptionList(subs []sns.SubscriptionInfo, next string) result {
	return func(x *awswire.XMLWriter) {
		x.Open("Subscriptions")
		for _, s := range subs {
			x.Open("member")
			x.Elem("TopicArn", s.TopicArn)
			x.Elem("Protocol", s.Protocol)
			x.Elem("SubscriptionArn", s.SubscriptionArn)
			x.Elem("Owner", s.Owner)
			x.Elem("Endpoint", s.Endpoint)
			x.Close("member")
		}
		x.Close("Subscriptions")
		if next != "" {
			x.Elem("NextToken", next)
		}
	}
}

func (h *Handler) getSubscriptionAttributes(r *request) (result, error) {
	m, err := h.engine.SubscriptionAttributes(r.f.Get("SubscriptionArn"))
	if err != nil {
		return nil, err
	}
	return func(x *awswire.XMLWriter) { attributes(x, m) }, nil
}

func (h *Handler) setSubscriptionAttributes(r *request) (result, error) {
	return nil, h.engine.SetSubscriptionAttribute(r.f.Get("SubscriptionArn"), r.f.Get("AttributeName"), r.f.Get("AttributeValue"))
}
