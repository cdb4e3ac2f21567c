package sqs

import (
	"encoding/json"
	"regexp"
)

// AddPermission and RemovePermission edit the queue's Policy attribute, as
// AWS does: one statement per label.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_AddPermission.html

var permissionActions = map[string]bool{
	"*": true, "SendMessage": true, "ReceiveMessage": true, "DeleteMessage": true,
	"ChangeMessageVisibility": true, "GetQueueAttributes": true, "GetQueueUrl": true,
	"ListDeadLetterSourceQueues": true, "PurgeQueue": true,
}

var labelRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

type policyDoc struct {
	Version   string            `json:"Version"`
	ID        string            `json:"Id,omitempty"`
	Statement []json.RawMessage `json:"Statement"`
}

type statement struct {
	Sid       string `json:"Sid"`
	Effect    string `json:"Effect"`
	Principal struct {
		AWS any `json:"AWS"`
	} `json:"Principal"`
	Action   any    `json:"Action"`
	Resource string `json:"Resource"`
}

// AddPermission adds a statement allowing accounts to perform actions.
func (q *Queue) AddPermission(label string, accounts, actions []string) error {
	if label == "" {
		return missing("Label")
	}
	if !labelRE.MatchString(label) {
		return invalidValue(label, "Label", "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length.")
	}
	if len(accounts) == 0 {
		return missing("AWSAccountIds")
	}
	if len(actions) == 0 {
		return missing("Actions")
	}
	for _, a := range actions {
		if !permissionActions[a] {
			return invalidValue("SQS:"+a, "ActionName", "Please refer to the appropriate WSDL for a list of valid actions. ")
		}
	}
	if len(actions) > 7 {
		return ErrOverLimit.New("%d Actions were found, maximum allowed is 7.", len(actions))
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	doc := policyDoc{Version: "2008-10-17", ID: q.arn + "/SQSDefaultPolicy"}
	if q.config.policy != "" {
		if err := json.Unmarshal([]byte(q.config.policy), &doc); err != nil {
			return ErrInvalidAttributeValue.New("Invalid value for the parameter Policy.")
		}
	}
	for _, raw := range doc.Statement {
		var s struct{ Sid string }
		if json.Unmarshal(raw, &s) == nil && s.Sid == label {
			return invalidValue(label, "Label", "Already exists.")
		}
	}
	var st statement
	st.Sid, st.Effect, st.Resource = label, "Allow", q.arn
	principals := make([]string, len(accounts))
	for i, a := range accounts {
		principals[i] = "arn:aws:iam::" + a + ":root"
	}
	st.Principal.AWS = oneOrMany(principals)
	acts := make([]string, len(actions))
	for i, a := range actions {
		acts[i] = "SQS:" + a
	}
	st.Action = oneOrMany(acts)
	raw, _ := json.Marshal(st)
	doc.Statement = append(doc.Statement, raw)
	b, _ := json.Marshal(doc)
	q.config.policy = string(b)
	q.modified = q.engine.clock.Now()
	return nil
}

// RemovePermission removes the statement with this label; removing the last
// one removes the Policy.
func (q *Queue) RemovePermission(label string) error {
	if label == "" {
		return missing("Label")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	var doc policyDoc
	if q.config.policy == "" || json.Unmarshal([]byte(q.config.policy), &doc) != nil {
		return invalidValue(label, "Label", "can't find label.")
	}
	kept := doc.Statement[:0]
	found := false
	for _, raw := range doc.Statement {
		var s struct{ Sid string }
		if json.Unmarshal(raw, &s) == nil && s.Sid == label {
			found = true
			continue
		}
		kept = append(kept, raw)
	}
	if !found {
		return invalidValue(label, "Label", "can't find label.")
	}
	if len(kept) == 0 {
		q.config.policy = ""
	} else {
		doc.Statement = kept
		b, _ := json.Marshal(doc)
		q.config.policy = string(b)
	}
	q.modified = q.engine.clock.Now()
	return nil
}

func oneOrMany(v []string) any {
	if len(v) == 1 {
		return v[0]
	}
	return v
}
