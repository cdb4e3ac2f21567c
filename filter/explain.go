package filter

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// Explanation tells why a message did or did not pass a policy, key by
// key. It is meant for people (the playground, the CLI) and serialises to
// JSON. Its Matched always equals what Match returns.
type Explanation struct {
	Matched bool  `json:"matched"`
	Scope   Scope `json:"scope"`
	// Reason explains an outcome decided before any key is looked at: an
	// empty policy, or a body that is not a JSON object.
	Reason string `json:"reason,omitempty"`
	// Branches has one entry per alternative of the policy: a policy
	// without $or has one, and each $or multiplies them by its branches.
	// The message passes when any branch matches.
	Branches []BranchExplanation `json:"branches,omitempty"`
}

// BranchExplanation is the outcome of one alternative of the policy: it
// matches when all its keys do.
type BranchExplanation struct {
	Matched bool             `json:"matched"`
	Keys    []KeyExplanation `json:"keys"`
	// Reason is set when every key matches on its own but the branch does
	// not: in the body, the keys were satisfied by different elements of
	// one array.
	Reason string `json:"reason,omitempty"`
}

// KeyExplanation is the outcome of one key: an attribute name, or a
// dotted path into the body.
type KeyExplanation struct {
	Key     string `json:"key"`
	Matched bool   `json:"matched"`
	// Present reports whether the message has a value for the key.
	Present bool `json:"present"`
	// Conditions are the key's conditions as written in the policy; any
	// one of them may match.
	Conditions []string `json:"conditions"`
	// Values are the message's values for the key, as JSON (the first 20
	// at most).
	Values []string `json:"values,omitempty"`
	// MatchedValue and Condition say which value satisfied which
	// condition, when the key matched.
	MatchedValue string `json:"matchedValue,omitempty"`
	Condition    string `json:"condition,omitempty"`
	// Reason says why the key did not match.
	Reason string `json:"reason,omitempty"`
}

// maxExplainValues caps the values listed per key.
const maxExplainValues = 20

// Explain matches the message like Match does and reports how each key of
// each alternative fared.
func (p *Policy) Explain(m Message) Explanation {
	if p.IsEmpty() {
		sc := ScopeAttributes
		if p != nil {
			sc = p.scope
		}
		return Explanation{Matched: true, Scope: sc, Reason: "the policy is empty: every message passes"}
	}
	ex := Explanation{Scope: p.scope}
	if p.scope == ScopeBody {
		root, ok := parseBody(m.Body)
		if !ok {
			if validJSON(m.Body) {
				ex.Reason = "the message body is JSON but not a JSON object, so no MessageBody policy matches it"
			} else {
				ex.Reason = "the message body is not valid JSON, so no MessageBody policy matches it"
			}
			return ex
		}
		for _, a := range p.alts {
			ex.Branches = append(ex.Branches, explainBodyBranch(root, m.Body, a, len(p.alts)))
		}
	} else {
		if len(m.Attributes) == 0 {
			ex.Reason = "the message has no attributes, so no MessageAttributes policy matches it (not even {\"exists\":false})"
			return ex
		}
		for _, a := range p.alts {
			br := BranchExplanation{Matched: true}
			for _, k := range a.keys {
				at, ok := m.Attributes[k.path]
				ke := explainAttribute(k, at, ok)
				br.Matched = br.Matched && ke.Matched
				br.Keys = append(br.Keys, ke)
			}
			ex.Branches = append(ex.Branches, br)
		}
	}
	if p.scope == ScopeBody {
		// The work budget is shared by the alternatives in Match; asking
		// Match keeps the answers equal even for pathological bodies.
		ex.Matched = p.matchBody(m.Body)
		return ex
	}
	for _, b := range ex.Branches {
		ex.Matched = ex.Matched || b.Matched
	}
	return ex
}

func conditionSources(k *keyMatcher) []string {
	out := make([]string, len(k.conds))
	for i := range k.conds {
		out[i] = k.conds[i].src
	}
	return out
}

// existsSource returns the source of the key's {"exists":want} condition.
func existsSource(k *keyMatcher, want bool) string {
	for i := range k.conds {
		if c := &k.conds[i]; c.op == opExists && c.exists == want {
			return c.src
		}
	}
	return ""
}

// showValue renders a message value as JSON for display.
func showValue(v *value) string {
	switch v.kind {
	case vString:
		return quoteJSON(v.str)
	case vNumber:
		return v.str
	case vTrue:
		return "true"
	case vFalse:
		return "false"
	case vNull:
		return "null"
	}
	return "(object or array)"
}

// firstMatch finds a condition of k that accepts v.
func firstMatch(k *keyMatcher, v *value) (string, bool) {
	for i := range k.conds {
		if k.conds[i].match(v) {
			return k.conds[i].src, true
		}
	}
	return "", false
}

func explainAttribute(k *keyMatcher, a Attribute, ok bool) KeyExplanation {
	ke := KeyExplanation{Key: k.path, Conditions: conditionSources(k), Matched: k.matchAttribute(a, ok)}
	if !ok {
		if ke.Matched {
			ke.Condition = existsSource(k, false)
		} else {
			ke.Reason = "the message has no attribute " + quoteJSON(k.path) + `; only {"exists":false} matches a missing attribute`
		}
		return ke
	}
	ke.Present = true
	switch classify(a.DataType) {
	case akBinary:
		ke.Values = []string{fmt.Sprintf("(Binary, %d bytes)", len(a.BinaryValue))}
		if ke.Matched {
			ke.Condition = existsSource(k, true)
		} else {
			ke.Reason = `Binary attributes are never compared with values; only {"exists":true} matches them`
		}
	case akArray:
		explainStringArray(k, a.StringValue, &ke)
	default:
		var v value
		if classify(a.DataType) == akNumber {
			v = numberValue(a.StringValue)
		} else {
			v = value{kind: vString, str: a.StringValue}
		}
		ke.Values = []string{showValue(&v)}
		if src, found := firstMatch(k, &v); found {
			ke.MatchedValue, ke.Condition = ke.Values[0], src
		} else {
			ke.Reason = "no condition accepts the value"
			if classify(a.DataType) == akNumber && v.kind != vNumber {
				ke.Reason += " (the Number attribute's value is not a number)"
			}
		}
	}
	return ke
}

func explainStringArray(k *keyMatcher, s string, ke *KeyExplanation) {
	if !validJSON(s) || !gjson.Parse(s).IsArray() {
		ke.Values = []string{quoteJSON(s)}
		if ke.Matched {
			ke.Condition = existsSource(k, true)
		} else {
			ke.Reason = "the String.Array value is not a JSON array, so only {\"exists\":true} can match it"
		}
		return
	}
	var elems []value
	gjson.Parse(s).ForEach(func(_, e gjson.Result) bool {
		elems = append(elems, resultValue(e))
		return true
	})
	for i := range elems {
		if i == maxExplainValues {
			break
		}
		ke.Values = append(ke.Values, showValue(&elems[i]))
	}
	if !ke.Matched {
		if len(elems) == 0 {
			ke.Reason = "the String.Array is empty"
		} else {
			ke.Reason = "no condition accepts any element (an anything-but condition needs every element to pass)"
		}
		return
	}
	for i := range k.conds {
		c := &k.conds[i]
		switch c.op {
		case opExists:
			if c.exists {
				ke.Condition = c.src
				return
			}
		case opAnythingBut, opAnythingButPrefix:
			all := len(elems) > 0
			for j := range elems {
				all = all && c.match(&elems[j])
			}
			if all {
				ke.Condition, ke.MatchedValue = c.src, "(every element)"
				return
			}
		default:
			for j := range elems {
				if c.match(&elems[j]) {
					ke.Condition, ke.MatchedValue = c.src, showValue(&elems[j])
					return
				}
			}
		}
	}
}

func explainBodyBranch(root gjson.Result, body string, a *alternative, alternatives int) BranchExplanation {
	// Each branch gets the budget a whole Match would have, so that a
	// branch matches here exactly when Match finds it does.
	bm := newBodyMatcher(body, alternatives)
	br := BranchExplanation{Matched: bm.alternative(root, a) && !bm.exhausted}
	if bm.exhausted {
		br.Reason = "the body is too deeply nested or repetitive to match within the work limit"
	}
	all := true
	for _, k := range a.keys {
		ke := KeyExplanation{Key: k.path, Conditions: conditionSources(k)}
		one := newBodyMatcher(body, alternatives)
		ke.Matched = one.alternative(root, &alternative{keys: []*keyMatcher{k}}) && !one.exhausted
		all = all && ke.Matched
		var vals []value
		collectValues(root, k.path, false, &vals, newBodyMatcher(body, 1))
		ke.Present = len(vals) > 0
		for i := range vals {
			if i == maxExplainValues {
				break
			}
			ke.Values = append(ke.Values, showValue(&vals[i]))
		}
		switch {
		case ke.Matched && !ke.Present:
			ke.Condition = existsSource(k, false)
		case ke.Matched:
			for i := range vals {
				if src, ok := firstMatch(k, &vals[i]); ok {
					ke.Condition, ke.MatchedValue = src, showValue(&vals[i])
					break
				}
			}
		case !ke.Present:
			ke.Reason = "the body has no value at " + quoteJSON(k.path) + ` (objects and empty arrays count as missing); only {"exists":false} matches a missing key`
		default:
			ke.Reason = "no condition accepts any value at this path"
		}
		br.Keys = append(br.Keys, ke)
	}
	if !br.Matched && all && br.Reason == "" {
		br.Reason = "each key matches on its own, but not within the same element of an array of objects"
	}
	return br
}

// collectValues gathers the leaf values at a dotted path, through every
// route and array element, stopping after a bounded number.
func collectValues(v gjson.Result, rem string, leaf bool, out *[]value, bm *bodyMatcher) {
	if len(*out) > maxExplainValues {
		return
	}
	if v.IsArray() {
		if !bm.charge(v) {
			return
		}
		v.ForEach(func(_, e gjson.Result) bool {
			collectValues(e, rem, leaf, out, bm)
			return len(*out) <= maxExplainValues
		})
		return
	}
	if leaf {
		if !v.IsObject() {
			*out = append(*out, resultValue(v))
		}
		return
	}
	if !v.IsObject() || !bm.charge(v) {
		return
	}
	v.ForEach(func(key, val gjson.Result) bool {
		name := key.Str
		switch {
		case rem == name:
			collectValues(val, "", true, out, bm)
		case len(rem) > len(name) && rem[len(name)] == '.' && strings.HasPrefix(rem, name):
			collectValues(val, rem[len(name)+1:], false, out, bm)
		}
		return len(*out) <= maxExplainValues
	})
}
