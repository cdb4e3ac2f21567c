// Package awserr is the one error type fanout's engines return. Wire codecs
// render it in each protocol's shape; handlers never choose status codes.
//
// Code embedding fanout reads an engine's error with errors.As:
//
//	var ae *awserr.Error
//	if errors.As(err, &ae) && ae.Code == sqs.ErrQueueDoesNotExist.Code { … }
//
// or matches a kind with errors.Is(err, sqs.ErrQueueDoesNotExist.New("")).
package awserr

import "fmt"

// Fault says whose fault an error is, as AWS's Query protocol reports it.
type Fault string

// The two faults AWS uses.
const (
	Sender   Fault = "Sender"
	Receiver Fault = "Receiver"
)

// Kind is one entry of an error catalogue: the codes and status of an AWS error.
type Kind struct {
	// Code is the short shape name used by JSON protocols after the namespace,
	// e.g. "QueueDoesNotExist".
	Code string
	// QueryCode is the code the Query protocol and the x-amzn-query-error
	// header carry, e.g. "AWS.SimpleQueueService.NonExistentQueue". Empty means Code.
	QueryCode string
	// Status is the HTTP status; QueryStatus overrides it for the Query protocol.
	Status      int
	QueryStatus int
	Fault       Fault
}

// Error is an AWS error with its message.
type Error struct {
	Kind
	Message string
	// QueryMessage, when set, replaces Message in Query protocol replies
	// (SQS words some messages differently there).
	QueryMessage string
}

// New returns an error of kind k with a formatted message.
func (k Kind) New(format string, args ...any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Kind: k, Message: msg}
}

// Is lets errors.Is match errors by kind.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func (e *Error) Error() string { return e.QueryCodeOrCode() + ": " + e.Message }

// QueryCodeOrCode returns the code used on the Query protocol.
func (e *Error) QueryCodeOrCode() string {
	if e.QueryCode != "" {
		return e.QueryCode
	}
	return e.Code
}

// StatusFor returns the HTTP status for the Query protocol (query=true) or JSON.
func (e *Error) StatusFor(query bool) int {
	if query && e.QueryStatus != 0 {
		return e.QueryStatus
	}
	if e.Status == 0 {
		return 400
	}
	return e.Status
}

// MessageFor returns the message for the Query protocol (query=true) or JSON.
func (e *Error) MessageFor(query bool) string {
	if query && e.QueryMessage != "" {
		return e.QueryMessage
	}
	return e.Message
}

// FaultOrSender returns the fault, Sender when unset.
func (e *Error) FaultOrSender() Fault {
	if e.Fault == "" {
		if e.Status >= 500 {
			return Receiver
		}
		return Sender
	}
	return e.Fault
}

// Internal is what an unexpected failure becomes: a bug, logged with the request id.
var Internal = Kind{Code: "InternalFailure", QueryCode: "InternalFailure", Status: 500, Fault: Receiver}
