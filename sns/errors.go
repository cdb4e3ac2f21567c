package sns

import (
	"fmt"

	"github.com/fanout/fanout/awserr"
)

// The SNS error catalogue: codes as the Query protocol carries them, with
// their HTTP statuses.
// https://docs.aws.amazon.com/sns/latest/api/CommonErrors.html and each
// action's Errors section.
var (
	ErrInvalidParameter          = kind("InvalidParameter", 400)
	ErrParameterValueInvalid     = kind("ParameterValueInvalid", 400)
	ErrValidation                = kind("ValidationError", 400)
	ErrNotFound                  = kind("NotFound", 404)
	ErrResourceNotFound          = kind("ResourceNotFound", 404)
	ErrAuthorization             = kind("AuthorizationError", 403)
	ErrTagLimitExceeded          = kind("TagLimitExceeded", 400)
	ErrTooManyEntries            = kind("TooManyEntriesInBatchRequest", 400)
	ErrBatchEntryIdsNotDistinct  = kind("BatchEntryIdsNotDistinct", 400)
	ErrEmptyBatchRequest         = kind("EmptyBatchRequest", 400)
	ErrInvalidBatchEntryID       = kind("InvalidBatchEntryId", 400)
	ErrBatchRequestTooLong       = kind("BatchRequestTooLong", 400)
	ErrFilterPolicyLimitExceeded = kind("FilterPolicyLimitExceeded", 403)
	ErrInvalidAction             = kind("InvalidAction", 400)
	ErrInternal                  = awserr.Kind{Code: "InternalError", Status: 500, Fault: awserr.Receiver}
)

func kind(code string, status int) awserr.Kind {
	return awserr.Kind{Code: code, Status: status, Fault: awserr.Sender}
}

// Catalogue lists every SNS error kind, for tests that check the table.
var Catalogue = []awserr.Kind{
	ErrInvalidParameter, ErrParameterValueInvalid, ErrValidation, ErrNotFound, ErrResourceNotFound,
	ErrAuthorization, ErrTagLimitExceeded, ErrTooManyEntries, ErrBatchEntryIdsNotDistinct,
	ErrEmptyBatchRequest, ErrInvalidBatchEntryID, ErrBatchRequestTooLong,
	ErrFilterPolicyLimitExceeded, ErrInvalidAction, ErrInternal,
}

// invalid is AWS's most common error: InvalidParameter, "Invalid parameter: <detail>".
func invalid(format string, args ...any) *awserr.Error {
	return ErrInvalidParameter.New("%s", "Invalid parameter: "+fmt.Sprintf(format, args...))
}

// Missing is the error for a required member the request lacks; field is the
// member's name as AWS's validator spells it (lower camel case).
func Missing(field string) *awserr.Error {
	return ErrValidation.New("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", field)
}

func topicNotFound() *awserr.Error        { return ErrNotFound.New("Topic does not exist") }
func subscriptionNotFound() *awserr.Error { return ErrNotFound.New("Subscription does not exist") }
