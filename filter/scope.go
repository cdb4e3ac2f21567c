package filter

// Scope says which part of a published message a policy is matched against:
// the subscription attribute FilterPolicyScope.
type Scope string

const (
	// ScopeAttributes matches the policy against the message attributes.
	// It is the default.
	ScopeAttributes Scope = "MessageAttributes"
	// ScopeBody matches the policy against the message body, which must be
	// a JSON object.
	ScopeBody Scope = "MessageBody"
)

// ParseScope checks a FilterPolicyScope value. The empty string means the
// default, ScopeAttributes. Any other value than the two scopes is rejected
// with AWS's message.
//
// https://docs.aws.amazon.com/sns/latest/dg/sns-message-filtering-scope.html
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case "", ScopeAttributes:
		return ScopeAttributes, nil
	case ScopeBody:
		return ScopeBody, nil
	}
	return "", &Error{
		Param:  "FilterPolicyScope",
		Reason: "Invalid value [" + s + "]. Please use either MessageBody or MessageAttributes",
		Offset: -1,
	}
}
