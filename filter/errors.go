package filter

import "fmt"

// Error is a rejected filter policy or scope, carrying the text AWS returns
// in an InvalidParameter error (HTTP 400, fault Sender).
//
// AWS words the message differently depending on the call and on the
// problem, so Error keeps the parts apart:
//
//	SetSubscriptionAttributes: Invalid parameter: FilterPolicy: <Reason>
//	Subscribe (Attributes):    Invalid parameter: Attributes Reason: FilterPolicy: <Reason>
//
// A few problems are reported without the "FilterPolicy: " segment (Param
// is then empty), and a bad scope names FilterPolicyScope instead.
type Error struct {
	// Param is the parameter AWS names before the reason: "FilterPolicy",
	// "FilterPolicyScope", or "" when AWS names none.
	Param string `json:"param,omitempty"`
	// Reason is AWS's text after "<Param>: ", for example
	// "Empty arrays are not allowed".
	Reason string `json:"reason"`
	// Offset is the byte offset in the policy where the problem was found,
	// or -1 when it concerns the policy as a whole. It is for tools that
	// highlight the spot; AWS does not return it.
	Offset int `json:"offset"`
}

// Code is the AWS error code for every filter policy error.
const Code = "InvalidParameter"

// Message returns what follows "Invalid parameter: FilterPolicy: " in AWS's
// message (or what follows "Invalid parameter: " when AWS names no
// parameter, or "Invalid parameter: FilterPolicyScope: " for a bad scope).
func (e *Error) Message() string { return e.Reason }

// Error returns the full message as SetSubscriptionAttributes reports it,
// for example "Invalid parameter: FilterPolicy: Empty arrays are not allowed".
func (e *Error) Error() string { return "Invalid parameter: " + e.detail() }

// SubscribeMessage returns the full message as Subscribe reports it when the
// policy arrives in its Attributes, for example
// "Invalid parameter: Attributes Reason: FilterPolicy: Empty arrays are not allowed".
func (e *Error) SubscribeMessage() string {
	return "Invalid parameter: Attributes Reason: " + e.detail()
}

func (e *Error) detail() string {
	if e.Param == "" {
		return e.Reason
	}
	return e.Param + ": " + e.Reason
}

// policyError builds a FilterPolicy error found at byte offset off.
func policyError(off int, format string, args ...any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Param: "FilterPolicy", Reason: msg, Offset: off}
}

// AWS's texts, kept together so the tests and the compiler agree.
const (
	msgTooManyKeys      = "Filter policy can not have more than 5 keys"
	msgTooComplex       = "Filter policy is too complex"
	msgTooLarge         = "Filter policy can not be larger than 256 KB" // unverified wording
	msgNested           = "Filter policy scope MessageAttributes does not support nested filter policy"
	msgNotObject        = "Filter is not an object"
	msgEmptyArray       = "Empty arrays are not allowed"
	msgEmptyObject      = "Empty objects are not allowed"
	msgMatchValue       = "Match value must be String, number, true, false, or null"
	msgOneKey           = "Only one key allowed in match expression"
	msgNoMatchName      = "Match expression name not found"
	msgOrNotArray       = "It must be an Array followed with $or."
	msgOrNotObject      = "Only JSON object is allowed in array of $or relationship."
	msgOrTooFew         = "There must have at least 2 Objects in $or relationship."
	msgExists           = "exists match pattern must be either true or false."
	msgNumericArray     = "Value of numeric must be an array."
	msgNumericTooMany   = "Too many elements in numeric expression"
	msgRangeTooMany     = "Too many terms in numeric range expression"
	msgBottomTop        = "Bottom must be less than top"
	msgABNoName         = "Anything-But expression name not found"
	msgABValue          = "Value of anything-but must be an array or single string/number value."
	msgABListType       = "Inside anything but list, start|null|boolean is not supported."
	msgABScalarType     = "Inside anything-but list, start|null|boolean is not supported."
	msgABMixed          = "Inside anything but list, either all values are number or string, mixed type is not supported"
	msgABNullPrefix     = "Null prefix not allowed"
	msgCIDRSlash        = "Malformed CIDR, one '/' required"
	msgCIDRMaskInt      = "Malformed CIDR, mask bits must be an integer"
	msgCIDRMaskNegative = "Malformed CIDR, mask bits must not be negative"
	msgCIDRMask4        = "IPv4 mask bits must be < 32"
	msgCIDRMask6        = "IPv6 mask bits must be < 128"
)
