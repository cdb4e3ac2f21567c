package fanout

import (
	"strings"

	"github.com/fanout/fanout/internal/iampolicy"
	"github.com/fanout/fanout/sqs"
)

// sqsGrantable maps the SQS actions a queue's Policy can grant to another
// account to the policy action that grants them (a batch is granted by its
// single action's name). AWS applies no cross-account permission to the
// others (CreateQueue, DeleteQueue, SetQueueAttributes, AddPermission,
// RemovePermission, TagQueue, UntagQueue, ListQueueTags, the move tasks):
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-limitations-of-custom-policies.html
var sqsGrantable = map[string]string{
	"SendMessage": "SendMessage", "SendMessageBatch": "SendMessage",
	"ReceiveMessage": "ReceiveMessage",
	"DeleteMessage":  "DeleteMessage", "DeleteMessageBatch": "DeleteMessage",
	"ChangeMessageVisibility": "ChangeMessageVisibility", "ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
	"GetQueueAttributes": "GetQueueAttributes", "GetQueueUrl": "GetQueueUrl",
	"ListDeadLetterSourceQueues": "ListDeadLetterSourceQueues", "PurgeQueue": "PurgeQueue",
}

// authorizeSQS is the check --enforce-policies adds to a call on another
// account's queue: the queue's Policy must allow the caller's account the
// action, or the call is AccessDenied, as on AWS.
func authorizeSQS(action, caller string, owner *sqs.Engine, q *sqs.Queue) error {
	if grant, ok := sqsGrantable[action]; ok && q != nil {
		attrs, err := q.Attributes([]string{sqs.AttrPolicy})
		if err == nil && len(attrs) == 1 && iampolicy.AllowsAccount(attrs[0].Value, caller, "sqs:"+grant, q.Arn()) {
			return nil
		}
	}
	if q == nil {
		// AWS's older words, which name the regional endpoint only.
		return sqs.ErrAccessDenied.New("Access to the resource https://sqs.%s.amazonaws.com/ is denied.", owner.Region())
	}
	// AWS's words since 2023 (the action in lower case, a batch as its
	// single action), fanout's caller being the account's root.
	act := "sqs:" + strings.ToLower(action)
	if grant, ok := sqsGrantable[action]; ok {
		act = "sqs:" + strings.ToLower(grant)
	}
	return sqs.ErrAccessDenied.New("User: arn:aws:iam::%s:root is not authorized to perform: %s on resource: %s because no resource-based policy allows the %s action",
		caller, act, q.Arn(), act)
}
