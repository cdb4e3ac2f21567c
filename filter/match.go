package filter

import (
	"net/netip"
	"strings"

	"github.com/tidwall/gjson"
)

// Attribute is an SNS message attribute as published.
type Attribute struct {
	// DataType is String, String.Array, Number or Binary, optionally with
	// a custom suffix such as "Number.float".
	DataType    string
	StringValue string
	BinaryValue []byte
}

// Message is what a policy is matched against: the attributes in
// MessageAttributes scope, the body in MessageBody scope.
type Message struct {
	Body       string
	Attributes map[string]Attribute
}

// Match reports whether the message passes the policy, that is whether SNS
// delivers it to the subscription. A nil or empty policy matches every
// message.
//
// In MessageAttributes scope Match does not allocate unless a String.Array
// attribute holds escaped strings.
func (p *Policy) Match(m Message) bool {
	if p.IsEmpty() {
		return true
	}
	if p.scope == ScopeBody {
		return p.matchBody(m.Body)
	}
	if len(m.Attributes) == 0 {
		// A message without attributes passes no attribute policy, not
		// even {"exists":false}: AWS documents that exists:false only
		// matches when at least one attribute is present.
		// https://docs.aws.amazon.com/sns/latest/dg/attribute-key-matching.html
		return false
	}
	for _, a := range p.alts {
		if a.matchAttributes(m.Attributes) {
			return true
		}
	}
	return false
}

func (a *alternative) matchAttributes(attrs map[string]Attribute) bool {
	for _, k := range a.keys {
		at, ok := attrs[k.path]
		if !k.matchAttribute(at, ok) {
			return false
		}
	}
	return true
}

type opKind uint8

const (
	opString opKind = iota + 1
	opNumber
	opTrue
	opFalse
	opNull
	opPrefix
	opSuffix
	opEqualsIgnoreCase
	opNumeric
	opAnythingBut
	opAnythingButPrefix
	opExists
	opCIDR
)

// numBound is one end of a numeric range.
type numBound struct {
	set, incl bool
	v         float64
}

// cond is one compiled condition: one element of a key's array.
type cond struct {
	op  opKind
	str string // exact string, prefix, suffix, equals-ignore-case, anything-but prefix
	num float64
	// nlo and nhi bound a numeric condition.
	nlo, nhi numBound
	// strs or nums list an anything-but's excluded values (AWS refuses
	// lists that mix the two).
	strs []string
	nums []float64
	// exists is the operand of {"exists":...}.
	exists bool
	// ipLo and ipHi bound a cidr condition.
	ipLo, ipHi netip.Addr
	// src is the condition as written in the policy, for Explain.
	src string
}

type valueKind uint8

const (
	vString valueKind = iota + 1
	vNumber
	vTrue
	vFalse
	vNull
	vOther // an object or array where a scalar was expected
)

// value is one message value a condition is tested against.
type value struct {
	kind valueKind
	// str is a string's content, or a number's text.
	str string
	// num is a number's value, rounded as parseNumber does.
	num float64
	// strForm is set for Number attributes, whose text also takes part in
	// exact string matching.
	strForm bool
}

func (v *value) isString() bool { return v.kind == vString }

// match tests a present value against the condition.
func (c *cond) match(v *value) bool {
	switch c.op {
	case opString:
		return (v.kind == vString || v.strForm) && v.str == c.str
	case opNumber:
		return v.kind == vNumber && v.num == c.num
	case opTrue:
		return v.kind == vTrue
	case opFalse:
		return v.kind == vFalse
	case opNull:
		return v.kind == vNull
	case opPrefix:
		return v.isString() && strings.HasPrefix(v.str, c.str)
	case opSuffix:
		return v.isString() && strings.HasSuffix(v.str, c.str)
	case opEqualsIgnoreCase:
		return v.isString() && strings.EqualFold(v.str, c.str)
	case opNumeric:
		return v.kind == vNumber && c.inRange(v.num)
	case opAnythingBut:
		return !c.excludes(v)
	case opAnythingButPrefix:
		return !(v.isString() && strings.HasPrefix(v.str, c.str))
	case opExists:
		return c.exists
	case opCIDR:
		if !v.isString() {
			return false
		}
		ip, ok := parseIP(v.str)
		return ok && ip.BitLen() == c.ipLo.BitLen() && c.ipLo.Compare(ip) <= 0 && ip.Compare(c.ipHi) <= 0
	}
	return false
}

func (c *cond) inRange(f float64) bool {
	if c.nlo.set && (f < c.nlo.v || (f == c.nlo.v && !c.nlo.incl)) {
		return false
	}
	if c.nhi.set && (f > c.nhi.v || (f == c.nhi.v && !c.nhi.incl)) {
		return false
	}
	return true
}

// excludes reports whether an anything-but list names the value. Values of
// another type than the list's are not named, so they pass.
func (c *cond) excludes(v *value) bool {
	if len(c.strs) > 0 {
		if v.kind != vString && !v.strForm {
			return false
		}
		for _, s := range c.strs {
			if s == v.str {
				return true
			}
		}
		return false
	}
	if v.kind != vNumber {
		return false
	}
	for _, n := range c.nums {
		if n == v.num {
			return true
		}
	}
	return false
}

// anyMatch reports whether any of the key's conditions accepts the value.
func (k *keyMatcher) anyMatch(v *value) bool {
	for i := range k.conds {
		if k.conds[i].match(v) {
			return true
		}
	}
	return false
}

type attrKind uint8

const (
	akString attrKind = iota
	akNumber
	akArray
	akBinary
)

func hasTypePrefix(dt, base string) bool {
	return dt == base || (len(dt) > len(base) && dt[len(base)] == '.' && dt[:len(base)] == base)
}

// classify maps an attribute's DataType to how it is matched. Types SNS
// would refuse at Publish are treated as strings.
func classify(dt string) attrKind {
	switch {
	case dt == "String.Array":
		return akArray
	case hasTypePrefix(dt, "String"):
		return akString
	case hasTypePrefix(dt, "Number"):
		return akNumber
	case hasTypePrefix(dt, "Binary"):
		return akBinary
	}
	return akString
}

// numberValue is the value of a Number attribute: numeric when its text
// parses, a plain string otherwise.
func numberValue(s string) value {
	if f, ok := parseNumber(s); ok {
		return value{kind: vNumber, str: s, num: f, strForm: true}
	}
	return value{kind: vString, str: s}
}

// matchAttribute tests the key against its attribute (ok reports whether
// the message has it).
func (k *keyMatcher) matchAttribute(a Attribute, ok bool) bool {
	if !ok {
		// An absent attribute only satisfies {"exists":false}; null does
		// not match absence.
		return k.existsFalse
	}
	switch classify(a.DataType) {
	case akBinary:
		// SNS ignores Binary attributes when matching values; the
		// attribute still exists.
		return k.existsTrue
	case akArray:
		return k.matchStringArray(a.StringValue)
	case akNumber:
		v := numberValue(a.StringValue)
		return k.anyMatch(&v)
	default:
		v := value{kind: vString, str: a.StringValue}
		return k.anyMatch(&v)
	}
}

// matchStringArray tests a String.Array attribute. A positive condition
// matches when any element matches it. An anything-but condition matches
// when the array has elements and none of them is excluded, as the current
// AWS documentation describes for String.Array attributes.
//
// https://docs.aws.amazon.com/sns/latest/dg/string-value-matching.html
func (k *keyMatcher) matchStringArray(s string) bool {
	if k.existsTrue {
		// The attribute is present, whatever its value.
		return true
	}
	if !validJSON(s) {
		return false
	}
	arr := gjson.Parse(s)
	if !arr.IsArray() {
		return false
	}
	if len(k.conds) > 64 {
		return k.matchStringArraySlow(arr)
	}
	// One pass over the elements: a positive condition may match at once;
	// excluded records the anything-but conditions some element failed.
	var negative, excluded uint64
	for i := range k.conds {
		if op := k.conds[i].op; op == opAnythingBut || op == opAnythingButPrefix {
			negative |= 1 << i
		}
	}
	elements, found := 0, false
	arr.ForEach(func(_, e gjson.Result) bool {
		elements++
		v := resultValue(e)
		for i := range k.conds {
			c := &k.conds[i]
			switch {
			case c.op == opExists:
			case negative&(1<<i) != 0:
				if !c.match(&v) {
					excluded |= 1 << i
				}
			case c.match(&v):
				found = true
				return false
			}
		}
		return true
	})
	return found || (elements > 0 && negative&^excluded != 0)
}

// matchStringArraySlow is matchStringArray for keys with more conditions
// than fit the bit sets: one pass per condition.
func (k *keyMatcher) matchStringArraySlow(arr gjson.Result) bool {
	for i := range k.conds {
		c := &k.conds[i]
		switch c.op {
		case opExists:
		case opAnythingBut, opAnythingButPrefix:
			n, excluded := 0, false
			arr.ForEach(func(_, e gjson.Result) bool {
				n++
				v := resultValue(e)
				excluded = !c.match(&v)
				return !excluded
			})
			if n > 0 && !excluded {
				return true
			}
		default:
			found := false
			arr.ForEach(func(_, e gjson.Result) bool {
				v := resultValue(e)
				found = c.match(&v)
				return !found
			})
			if found {
				return true
			}
		}
	}
	return false
}

// resultValue converts a JSON value read by gjson.
func resultValue(r gjson.Result) value {
	switch r.Type {
	case gjson.String:
		return value{kind: vString, str: r.Str}
	case gjson.Number:
		if f, ok := parseNumber(r.Raw); ok {
			return value{kind: vNumber, str: r.Raw, num: f}
		}
	case gjson.True:
		return value{kind: vTrue}
	case gjson.False:
		return value{kind: vFalse}
	case gjson.Null:
		return value{kind: vNull}
	}
	return value{kind: vOther}
}
