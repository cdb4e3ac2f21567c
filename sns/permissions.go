package sns

import (
	"github.com/fanout/fanout/internal/iampolicy"
)

// AddPermission and RemovePermission edit the topic's Policy attribute, one
// statement per label.
// https://docs.aws.amazon.com/sns/latest/api/API_AddPermission.html

// snsActions are the action names AddPermission accepts.
var snsActions = map[string]bool{
	"*": true, "AddPermission": true, "ConfirmSubscription": true, "DeleteTopic": true,
	"GetDataProtectionPolicy": true, "GetSubscriptionAttributes": true, "GetTopicAttributes": true,
	"ListSubscriptions": true, "ListSubscriptionsByTopic": true, "ListTagsForResource": true,
	"ListTopics": true, "Publish": true, "PublishBatch": true, "PutDataProtectionPolicy": true,
	"Receive": true, "RemovePermission": true, "SetSubscriptionAttributes": true,
	"SetTopicAttributes": true, "Subscribe": true, "TagResource": true, "Unsubscribe": true,
	"UntagResource": true,
}

// AddPermission adds a statement letting accounts perform actions on a topic.
func (e *Engine) AddPermission(topicArn, label string, accounts, actions []string) error {
	t, err := e.topicByArn(topicArn, "TopicArn", "AddPermission")
	if err != nil {
		return err
	}
	switch {
	case label == "":
		return Missing("label")
	case len(accounts) == 0:
		return Missing("aWSAccountId")
	case len(actions) == 0:
		return Missing("actionName")
	}
	for _, a := range actions {
		if !snsActions[a] {
			return invalid("Policy statement action out of service scope!")
		}
	}
	return t.update(func() error {
		doc, err := t.policyDoc()
		if err != nil {
			return err
		}
		if doc.Has(label) {
			return invalid("Statement already exists")
		}
		principals := make([]string, len(accounts))
		for i, a := range accounts {
			principals[i] = iampolicy.AccountPrincipal(a)
		}
		doc.AddAllow(label, principals, iampolicy.Prefixed("SNS:", actions), t.arn)
		t.cfg.policy = doc.String()
		return nil
	})
}

// RemovePermission removes the statement with this label.
func (e *Engine) RemovePermission(topicArn, label string) error {
	t, err := e.topicByArn(topicArn, "TopicArn", "RemovePermission")
	if err != nil {
		return err
	}
	if label == "" {
		return Missing("label")
	}
	return t.update(func() error {
		doc, err := t.policyDoc()
		if err != nil {
			return err
		}
		doc.Remove(label)
		t.cfg.policy = doc.String()
		return nil
	})
}

// policyDoc parses the topic's policy (the default one when unset).
// Callers hold mu.
func (t *Topic) policyDoc() (*iampolicy.Document, error) {
	text, _ := t.cfg.render(AttrPolicy, t.arn, t.engine.opts.Account, t.fifo)
	doc, err := iampolicy.Parse(text)
	if err != nil {
		return nil, invalid("Policy Error: null")
	}
	return doc, nil
}
