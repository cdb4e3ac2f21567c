package sns

import (
	"encoding/json"
	"strings"
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

type topicPolicy struct {
	Version   string            `json:"Version"`
	ID        string            `json:"Id,omitempty"`
	Statement []json.RawMessage `json:"Statement"`
}

type permissionStatement struct {
	Sid       string `json:"Sid"`
	Effect    string `json:"Effect"`
	Principal struct {
		AWS any `json:"AWS"`
	} `json:"Principal"`
	Action   any    `json:"Action"`
	Resource string `json:"Resource"`
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
	t.mu.Lock()
	defer t.mu.Unlock()
	doc, err := t.policyDoc()
	if err != nil {
		return err
	}
	for _, raw := range doc.Statement {
		if statementSid(raw) == label {
			return invalid("Statement already exists")
		}
	}
	st := permissionStatement{Sid: label, Effect: "Allow", Resource: t.arn}
	principals := make([]string, len(accounts))
	for i, a := range accounts {
		if strings.HasPrefix(a, "arn:") {
			principals[i] = a
		} else {
			principals[i] = "arn:aws:iam::" + a + ":root"
		}
	}
	st.Principal.AWS = oneOrMany(principals)
	acts := make([]string, len(actions))
	for i, a := range actions {
		acts[i] = "SNS:" + a
	}
	st.Action = oneOrMany(acts)
	raw, _ := json.Marshal(st)
	doc.Statement = append(doc.Statement, raw)
	b, _ := json.Marshal(doc)
	t.cfg.policy = string(b)
	return nil
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
	t.mu.Lock()
	defer t.mu.Unlock()
	doc, err := t.policyDoc()
	if err != nil {
		return err
	}
	kept := doc.Statement[:0]
	for _, raw := range doc.Statement {
		if statementSid(raw) != label {
			kept = append(kept, raw)
		}
	}
	doc.Statement = kept
	b, _ := json.Marshal(doc)
	t.cfg.policy = string(b)
	return nil
}

// policyDoc parses the topic's policy (the default one when unset).
// Callers hold mu.
func (t *Topic) policyDoc() (*topicPolicy, error) {
	text, _ := t.cfg.render(AttrPolicy, t.arn, t.engine.opts.Account, t.fifo)
	var doc topicPolicy
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil, invalid("Policy Error: null")
	}
	return &doc, nil
}

func statementSid(raw json.RawMessage) string {
	var s struct{ Sid string }
	_ = json.Unmarshal(raw, &s)
	return s.Sid
}

func oneOrMany(v []string) any {
	if len(v) == 1 {
		return v[0]
	}
	return v
}
