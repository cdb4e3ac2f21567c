package fanout

import (
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
	// AWS's words: the resource is the regional endpoint, not the queue.
	return sqs.ErrAccessDenied.New("Access to the resource https://sqs.%s.amazonaws.com/ is denied.", owner.Region())
}
