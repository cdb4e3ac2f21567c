package playground

import (
	"errors"

	"github.com/fanout/fanout/filter"
)

// Result is the outcome of trying a policy on a message: the body of a
// POST /_fanout/filter/test reply, and what `fanout filter --json` prints.
type Result struct {
	// Valid reports whether SNS would accept the policy and scope.
	Valid bool `json:"valid"`
	// Error is AWS's InvalidParameter message for a rejected policy or
	// scope, as SetSubscriptionAttributes returns it.
	Error string `json:"error,omitempty"`
	// ErrorOffset is the byte offset in the policy where the problem was
	// found, when it concerns one spot (AWS does not say; fanout does, for
	// highlighting).
	ErrorOffset *int `json:"errorOffset,omitempty"`
	// Matched reports whether SNS would deliver the message. It is false
	// for an invalid policy.
	Matched bool `json:"matched"`
	// Explanation tells, per $or branch and per key, why. It is absent for
	// an invalid policy.
	Explanation *filter.Explanation `json:"explanation,omitempty"`
}

// Evaluate compiles policy for scope ("" means MessageAttributes) and
// explains how m fares against it.
func Evaluate(policy string, scope filter.Scope, m filter.Message) Result {
	p, err := filter.Compile(policy, scope)
	if err != nil {
		r := Result{Error: err.Error()}
		var fe *filter.Error
		if errors.As(err, &fe) && fe.Offset >= 0 {
			off := fe.Offset
			r.ErrorOffset = &off
		}
		return r
	}
	ex := p.Explain(m)
	return Result{Valid: true, Matched: ex.Matched, Explanation: &ex}
}
