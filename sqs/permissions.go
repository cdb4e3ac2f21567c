package sqs

import (
	"regexp"

	"github.com/fanout/fanout/internal/iampolicy"
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
	return q.update(func() (bool, error) {
		doc := &iampolicy.Document{Version: "2008-10-17", ID: q.arn + "/SQSDefaultPolicy"}
		if q.config.policy != "" {
			var err error
			if doc, err = iampolicy.Parse(q.config.policy); err != nil {
				return false, ErrInvalidAttributeValue.New("Invalid value for the parameter Policy.")
			}
		}
		if doc.Has(label) {
			return false, invalidValue(label, "Label", "Already exists.")
		}
		principals := make([]string, len(accounts))
		for i, a := range accounts {
			principals[i] = iampolicy.AccountPrincipal(a)
		}
		doc.AddAllow(label, principals, iampolicy.Prefixed("SQS:", actions), q.arn)
		q.config.policy = doc.String()
		q.modified = q.engine.clock.Now()
		return false, nil
	})
}

// RemovePermission removes the statement with this label; removing the last
// one removes the Policy.
func (q *Queue) RemovePermission(label string) error {
	if label == "" {
		return missing("Label")
	}
	return q.update(func() (bool, error) {
		doc, err := iampolicy.Parse(q.config.policy)
		if q.config.policy == "" || err != nil || !doc.Remove(label) {
			return false, invalidValue(label, "Label", "can't find label.")
		}
		if len(doc.Statement) == 0 {
			q.config.policy = ""
		} else {
			q.config.policy = doc.String()
		}
		q.modified = q.engine.clock.Now()
		return false, nil
	})
}
