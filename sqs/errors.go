package sqs

import "github.com/fanout/fanout/awserr"

// The SQS error catalogue. Code is the JSON shape name (after
// "com.amazonaws.sqs#"); QueryCode is what the Query protocol and the
// x-amzn-query-error header carry. All SQS errors are the sender's fault.
// See https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/CommonErrors.html
var (
	ErrQueueDoesNotExist      = kind("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue")
	ErrQueueNameExists        = kind("QueueNameExists", "QueueAlreadyExists")
	ErrInvalidParameterValue  = kind("InvalidParameterValueException", "InvalidParameterValue")
	ErrMissingParameter       = kind("MissingRequiredParameterException", "MissingParameter")
	ErrInvalidAttributeName   = kind("InvalidAttributeName", "")
	ErrInvalidAttributeValue  = kind("InvalidAttributeValue", "")
	ErrInvalidMessageContents = kind("InvalidMessageContents", "")
	ErrReceiptHandleIsInvalid = kind("ReceiptHandleIsInvalid", "")
	ErrOverLimit              = kind("OverLimit", "")
	ErrInvalidAddress         = kind("InvalidAddress", "")
	ErrInvalidAction          = kind("InvalidAction", "")
	ErrUnknownOperation       = kind("UnknownOperationException", "")
	ErrSerialization          = kind("SerializationException", "")
	ErrBatchEntryIdsNotDist   = kind("BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct")
	ErrBatchRequestTooLong    = kind("BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong")
	ErrEmptyBatchRequest      = kind("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest")
	ErrInvalidBatchEntryID    = kind("InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId")
	ErrTooManyEntries         = kind("TooManyEntriesInBatchRequest", "AWS.SimpleQueueService.TooManyEntriesInBatchRequest")
	ErrQueueDeletedRecently   = kind("QueueDeletedRecently", "AWS.SimpleQueueService.QueueDeletedRecently")
	ErrUnsupportedOperation   = kind("UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation")
	ErrMessageNotInflight     = kind("MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight")
	// PurgeQueueInProgress is 403 on the Query protocol, 400 on JSON.
	ErrPurgeQueueInProgress = awserr.Kind{Code: "PurgeQueueInProgress", QueryCode: "AWS.SimpleQueueService.PurgeQueueInProgress", Status: 400, QueryStatus: 403, Fault: awserr.Sender}
	// RequestThrottled is what a send gets while storing would pass the
	// memory limit (memlimit.go).
	ErrRequestThrottled = kind("RequestThrottled", "")
	// AccessDenied is a call on another account's queue that its Policy
	// does not allow (fanout checks with --enforce-policies only).
	ErrAccessDenied = awserr.Kind{Code: "AccessDeniedException", QueryCode: "AccessDenied", Status: 403, Fault: awserr.Sender}
	// ResourceNotFoundException is 404 on the Query protocol.
	ErrResourceNotFound = awserr.Kind{Code: "ResourceNotFoundException", Status: 400, QueryStatus: 404, Fault: awserr.Sender}
)

func kind(code, query string) awserr.Kind {
	return awserr.Kind{Code: code, QueryCode: query, Status: 400, Fault: awserr.Sender}
}

// Catalogue lists every SQS error kind, for tests that check the table.
var Catalogue = []awserr.Kind{
	ErrQueueDoesNotExist, ErrQueueNameExists, ErrInvalidParameterValue, ErrMissingParameter,
	ErrInvalidAttributeName, ErrInvalidAttributeValue, ErrInvalidMessageContents,
	ErrReceiptHandleIsInvalid, ErrOverLimit, ErrInvalidAddress, ErrInvalidAction,
	ErrUnknownOperation, ErrSerialization, ErrBatchEntryIdsNotDist, ErrBatchRequestTooLong,
	ErrEmptyBatchRequest, ErrInvalidBatchEntryID, ErrTooManyEntries, ErrQueueDeletedRecently,
	ErrUnsupportedOperation, ErrMessageNotInflight, ErrPurgeQueueInProgress, ErrResourceNotFound,
	ErrRequestThrottled, ErrAccessDenied,
}

// queueDoesNotExist is the error every action returns for a missing queue;
// the Query protocol words it differently.
func queueDoesNotExist() *awserr.Error {
	e := ErrQueueDoesNotExist.New("The specified queue does not exist.")
	e.QueryMessage = "The specified queue does not exist for this wsdl version."
	return e
}

func invalidValue(value, param, reason string) *awserr.Error {
	return ErrInvalidParameterValue.New("Value %s for parameter %s is invalid. Reason: %s", value, param, reason)
}

func missing(param string) *awserr.Error {
	return ErrMissingParameter.New("The request must contain the parameter %s.", param)
}

// QueueDoesNotExist returns the error for a queue that is not there.
func QueueDoesNotExist() error { return queueDoesNotExist() }
