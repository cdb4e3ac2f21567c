package filter

import (
	"net/netip"
	"strings"
)

// Limits AWS applies to a filter policy.
//
// https://docs.aws.amazon.com/sns/latest/dg/subscription-filter-policy-constraints.html
const (
	// MaxKeys is the most keys one policy may test. In MessageBody scope
	// only leaf keys (those holding arrays) count, and each $or branch is
	// counted together with the keys outside it.
	MaxKeys = 5
	// MaxCombinations bounds the product of the policy's array lengths (see
	// Policy.Combinations).
	MaxCombinations = 150
	// MaxPolicySize is the largest policy text in bytes.
	MaxPolicySize = 256 * 1024
)

// Policy is a compiled filter policy. It is immutable and safe for
// concurrent use.
type Policy struct {
	scope  Scope
	source string
	combos int
	// alts are the policy's alternatives: $or is expanded at compile time
	// into one alternative per choice of branches, so matching is "any
	// alternative whose keys all match". Empty means no filtering.
	alts []*alternative
}

// alternative is one $or-free reading of the policy: every key must match.
type alternative struct {
	keys []*keyMatcher
}

// keyMatcher tests one key (an attribute name, or a dotted path into the
// body) against the conditions of its array, any of which may match.
type keyMatcher struct {
	path  string
	conds []cond
	// existsTrue and existsFalse record {"exists":true} and
	// {"exists":false} conditions, which decide presence and absence
	// without looking at values.
	existsTrue, existsFalse bool
}

// Scope returns the scope the policy was compiled for.
func (p *Policy) Scope() Scope { return p.scope }

// String returns the policy text as given to Compile.
func (p *Policy) String() string { return p.source }

// IsEmpty reports whether the policy filters nothing: it was "" or {}. AWS
// treats setting such a policy as removing the filter.
func (p *Policy) IsEmpty() bool { return p == nil || len(p.alts) == 0 }

// Combinations returns the policy's complexity as AWS computes it for the
// 150 limit: the product of the lengths of its arrays, each multiplied by
// its nesting depth in MessageBody scope, with the branches of a $or
// summed. Values above MaxCombinations are reported as MaxCombinations+1.
func (p *Policy) Combinations() int { return p.combos }

// Compile validates a filter policy as SNS does when it is set on a
// subscription and compiles it for matching. The empty string, like {},
// gives a policy that matches every message. scope "" means
// ScopeAttributes.
//
// A rejected policy or scope returns an *Error carrying AWS's message.
func Compile(policy string, scope Scope) (*Policy, error) {
	sc, err := ParseScope(string(scope))
	if err != nil {
		return nil, err
	}
	p, perr := compile(policy, sc)
	if perr != nil {
		return nil, perr
	}
	return p, nil
}

// MustCompile is like Compile but panics on error. It is meant for tests
// and for policies fixed in code.
func MustCompile(policy string, scope Scope) *Policy {
	p, err := Compile(policy, scope)
	if err != nil {
		panic(err)
	}
	return p
}

func compile(policy string, scope Scope) (*Policy, *Error) {
	p := &Policy{scope: scope, source: policy}
	if policy == "" {
		return p, nil
	}
	if len(policy) > MaxPolicySize {
		return nil, policyError(-1, msgTooLarge)
	}
	root, err := parseJSON(policy)
	if err != nil {
		return nil, err
	}
	if root.kind != nObject {
		return nil, policyError(root.start, msgNotObject)
	}
	if len(root.keys) == 0 {
		return p, nil
	}
	c := &compiler{body: scope == ScopeBody, leaves: map[*node]*keyMatcher{}}

	// The checks run in the order AWS applies them, so that a policy with
	// several faults gets the message AWS would give.
	if countKeys(root, c.body) > MaxKeys {
		return nil, policyError(-1, msgTooManyKeys)
	}
	if err := checkShape(root); err != nil {
		return nil, err
	}
	if !c.body {
		if n := findNested(root); n != nil {
			return nil, &Error{Reason: msgNested, Offset: n.start}
		}
	}
	p.combos = combinations(root, 1, c.body)
	if p.combos > MaxCombinations {
		return nil, policyError(-1, msgTooComplex)
	}
	if err := c.compileLeaves(root, "", false); err != nil {
		return nil, err
	}
	p.alts = c.expand(root, []*alternative{{}})
	return p, nil
}

// countKeys counts the keys of the largest alternative: a $or contributes
// its largest branch. In body scope nested objects are looked through and
// only leaves count; in attribute scope every key counts (nesting is
// rejected later anyway).
func countKeys(obj *node, body bool) int {
	n := 0
	for i, key := range obj.keys {
		v := obj.vals[i]
		switch {
		case key == "$or" && v.kind == nArray:
			best, objects := 0, false
			for _, b := range v.vals {
				if b.kind == nObject {
					objects = true
					best = max(best, countKeys(b, body))
				}
			}
			if !objects {
				best = 1
			}
			n += best
		case body && v.kind == nObject:
			n += countKeys(v, body)
		default:
			n++
		}
	}
	return n
}

// checkShape checks the structure of the policy: every key holds an object
// or a non-empty array, objects are not empty, and $or holds at least two
// objects.
func checkShape(obj *node) *Error {
	if len(obj.keys) == 0 {
		return policyError(obj.start, msgEmptyObject)
	}
	for i, key := range obj.keys {
		v := obj.vals[i]
		if key == "$or" {
			if v.kind != nArray {
				return policyError(v.start, msgOrNotArray)
			}
			for _, b := range v.vals {
				if b.kind != nObject {
					return policyError(b.start, msgOrNotObject)
				}
				if err := checkShape(b); err != nil {
					return err
				}
			}
			if len(v.vals) < 2 {
				return policyError(v.end, msgOrTooFew)
			}
			continue
		}
		switch v.kind {
		case nObject:
			if err := checkShape(v); err != nil {
				return err
			}
		case nArray:
			if len(v.vals) == 0 {
				return policyError(v.end, msgEmptyArray)
			}
		default:
			return policyError(v.start, "\"%s\" must be an object or an array", key)
		}
	}
	return nil
}

// findNested returns the first nested object of a shape-checked policy, or
// nil.
func findNested(obj *node) *node {
	for i, key := range obj.keys {
		v := obj.vals[i]
		if key == "$or" {
			for _, b := range v.vals {
				if n := findNested(b); n != nil {
					return n
				}
			}
			continue
		}
		if v.kind == nObject {
			return v
		}
	}
	return nil
}

// combinations computes AWS's complexity measure of a shape-checked
// object at the given depth, saturating above MaxCombinations.
func combinations(obj *node, depth int, body bool) int {
	total := 1
	for i, key := range obj.keys {
		v := obj.vals[i]
		var f int
		switch {
		case key == "$or":
			for _, b := range v.vals {
				f = satAdd(f, combinations(b, depth, body))
			}
		case v.kind == nObject:
			f = combinations(v, depth+1, body)
		case body:
			f = satMul(len(v.vals), depth)
		default:
			f = len(v.vals)
		}
		total = satMul(total, f)
	}
	return total
}

func satMul(a, b int) int {
	if a > MaxCombinations || b > MaxCombinations {
		return MaxCombinations + 1
	}
	return min(a*b, MaxCombinations+1)
}

func satAdd(a, b int) int { return min(a+b, MaxCombinations+1) }

type compiler struct {
	body bool
	// leaves maps each leaf array of the policy to its compiled matcher.
	leaves map[*node]*keyMatcher
}

func (c *compiler) joinPath(prefix string, nested bool, key string) string {
	if c.body && nested {
		return prefix + "." + key
	}
	return key
}

// compileLeaves compiles every condition of a shape-checked object in
// document order, so the first faulty condition is the one reported.
func (c *compiler) compileLeaves(obj *node, prefix string, nested bool) *Error {
	for i, key := range obj.keys {
		v := obj.vals[i]
		if key == "$or" {
			for _, b := range v.vals {
				if err := c.compileLeaves(b, prefix, nested); err != nil {
					return err
				}
			}
			continue
		}
		path := c.joinPath(prefix, nested, key)
		if v.kind == nObject {
			if err := c.compileLeaves(v, path, true); err != nil {
				return err
			}
			continue
		}
		k := &keyMatcher{path: path}
		for _, e := range v.vals {
			cd, err := compileCondition(e)
			if err != nil {
				return err
			}
			if cd.op == opExists {
				if cd.exists {
					k.existsTrue = true
				} else {
					k.existsFalse = true
				}
			}
			k.conds = append(k.conds, cd)
		}
		c.leaves[v] = k
	}
	return nil
}

// expand turns the policy into its alternatives. Each $or multiplies the
// alternatives built so far by its branches. A path set twice in one
// alternative keeps the later conditions, as AWS's rule compiler does.
func (c *compiler) expand(obj *node, alts []*alternative) []*alternative {
	for i, key := range obj.keys {
		v := obj.vals[i]
		switch {
		case key == "$or":
			var next []*alternative
			for _, b := range v.vals {
				copies := make([]*alternative, len(alts))
				for j, a := range alts {
					copies[j] = &alternative{keys: append([]*keyMatcher(nil), a.keys...)}
				}
				next = append(next, c.expand(b, copies)...)
			}
			alts = next
		case v.kind == nObject:
			alts = c.expand(v, alts)
		default:
			k := c.leaves[v]
			for _, a := range alts {
				a.put(k)
			}
		}
	}
	return alts
}

func (a *alternative) put(k *keyMatcher) {
	for i, old := range a.keys {
		if old.path == k.path {
			a.keys[i] = k
			return
		}
	}
	a.keys = append(a.keys, k)
}

// compileCondition compiles one element of a key's array.
func compileCondition(e *node) (cond, *Error) {
	cd := cond{src: renderJSON(e)}
	switch e.kind {
	case nString:
		cd.op, cd.str = opString, e.text
	case nNumber:
		cd.op = opNumber
		cd.num, _ = parseNumber(e.text)
	case nTrue:
		cd.op = opTrue
	case nFalse:
		cd.op = opFalse
	case nNull:
		cd.op = opNull
	case nArray:
		return cd, policyError(e.start, msgMatchValue)
	case nObject:
		if err := compileExpression(e, &cd); err != nil {
			return cd, err
		}
	}
	return cd, nil
}

func renderJSON(n *node) string {
	var b strings.Builder
	writeJSON(&b, n)
	return b.String()
}

// compileExpression compiles a match expression such as {"prefix":"a"}.
// The checks follow AWS's order: the operator's value first, then any
// extra key.
func compileExpression(o *node, cd *cond) *Error {
	if len(o.keys) == 0 {
		return policyError(o.start, msgNoMatchName)
	}
	op, v := o.keys[0], o.vals[0]
	extra := msgOneKey
	switch op {
	case "prefix", "suffix", "equals-ignore-case":
		if v.kind != nString {
			return policyError(v.start, "%s match pattern must be a string", op)
		}
		cd.str = v.text
		switch op {
		case "prefix":
			cd.op = opPrefix
		case "suffix":
			cd.op = opSuffix
		default:
			cd.op = opEqualsIgnoreCase
		}
	case "numeric":
		if v.kind != nArray {
			return policyError(v.start, msgNumericArray)
		}
		if err := compileNumeric(v, cd); err != nil {
			return err
		}
		extra = msgNumericTooMany
	case "anything-but":
		if err := compileAnythingBut(v, cd); err != nil {
			return err
		}
		if v.kind != nObject {
			// AWS reports an extra key after a value or list with the
			// numeric wording.
			extra = msgNumericTooMany
		}
	case "exists":
		switch v.kind {
		case nTrue:
			cd.exists = true
		case nFalse:
		default:
			return policyError(v.start, msgExists)
		}
		cd.op = opExists
	case "cidr":
		if v.kind != nString {
			// sic: AWS reuses the prefix wording here.
			return policyError(v.start, "prefix match pattern must be a string")
		}
		lo, hi, reason := parseCIDR(v.text)
		if reason != "" {
			return policyError(v.start, "%s", reason)
		}
		cd.op, cd.ipLo, cd.ipHi = opCIDR, lo, hi
	default:
		return policyError(o.start, "Unrecognized match type %s", op)
	}
	if len(o.keys) > 1 {
		return policyError(o.vals[1].start, "%s", extra)
	}
	return nil
}

// compileNumeric compiles {"numeric":[...]}: one comparison, or a range
// whose lower bound comes first. The messages follow AWS's parser, which
// reads the array token by token.
func compileNumeric(arr *node, cd *cond) *Error {
	el := arr.vals
	// at returns element i, or nil past the end (the closing bracket).
	at := func(i int) *node {
		if i < len(el) {
			return el[i]
		}
		return nil
	}
	endText := func(n *node) string {
		if n == nil {
			return "]"
		}
		return n.tokenText()
	}
	off := func(n *node) int {
		if n == nil {
			return arr.end - 1
		}
		return n.start
	}
	isNum := func(n *node) bool { return n != nil && n.kind == nNumber }

	first := at(0)
	if first == nil || first.kind != nString {
		return policyError(off(first), "Invalid member in numeric match: %s", endText(first))
	}
	op, val := first.text, at(1)
	cd.op = opNumeric
	switch op {
	case "=":
		if !isNum(val) {
			return policyError(off(val), "Value of equals must be numeric")
		}
		if len(el) > 2 {
			return policyError(el[2].start, msgNumericTooMany)
		}
		f, _ := parseNumber(val.text)
		cd.nlo, cd.nhi = numBound{set: true, v: f, incl: true}, numBound{set: true, v: f, incl: true}
	case "<", "<=":
		if !isNum(val) {
			return policyError(off(val), "Value of %s must be numeric", op)
		}
		if len(el) > 2 {
			return policyError(el[2].start, msgNumericTooMany)
		}
		f, _ := parseNumber(val.text)
		cd.nhi = numBound{set: true, v: f, incl: op == "<="}
	case ">", ">=":
		if !isNum(val) {
			return policyError(off(val), "Value of %s must be numeric", op)
		}
		bottom := rawFloat(val.text)
		f, _ := parseNumber(val.text)
		cd.nlo = numBound{set: true, v: f, incl: op == ">="}
		next := at(2)
		if next == nil {
			return nil
		}
		if next.kind != nString {
			return policyError(next.start, "Bad value in numeric range: %s", next.tokenText())
		}
		op2 := next.text
		if op2 != "<" && op2 != "<=" {
			return policyError(next.start, "Bad numeric range operator: %s", op2)
		}
		topNode := at(3)
		if !isNum(topNode) {
			return policyError(off(topNode), "Value of %s must be numeric", op2)
		}
		if len(el) > 4 {
			return policyError(el[4].start, msgRangeTooMany)
		}
		if bottom >= rawFloat(topNode.text) {
			return policyError(topNode.start, msgBottomTop)
		}
		g, _ := parseNumber(topNode.text)
		cd.nhi = numBound{set: true, v: g, incl: op2 == "<="}
	default:
		return policyError(first.start, "Unrecognized numeric range operator: %s", op)
	}
	return nil
}

// rawFloat is a policy number before rounding to five decimals; AWS checks
// that a range's bottom is below its top on the exact values.
func rawFloat(s string) float64 {
	f, _ := parseNumberRaw(s)
	return f
}

// compileAnythingBut compiles the value of an anything-but expression: a
// string, a number, a list of strings or of numbers, or {"prefix":"..."}.
func compileAnythingBut(v *node, cd *cond) *Error {
	switch v.kind {
	case nObject:
		if len(v.keys) == 0 {
			return policyError(v.start, msgABNoName)
		}
		op, pv := v.keys[0], v.vals[0]
		// AWS accepts only prefix inside anything-but (recorded 2024-05:
		// suffix, exists and others are refused).
		if op != "prefix" {
			return policyError(v.start, "Unsupported anything-but pattern: %s", op)
		}
		if pv.kind != nString {
			return policyError(pv.start, "prefix match pattern must be a string")
		}
		if pv.text == "" {
			return policyError(pv.start, msgABNullPrefix)
		}
		if len(v.keys) > 1 {
			return policyError(v.vals[1].start, msgOneKey)
		}
		cd.op, cd.str = opAnythingButPrefix, pv.text
	case nArray:
		for _, e := range v.vals {
			switch e.kind {
			case nString:
				cd.strs = append(cd.strs, e.text)
			case nNumber:
				f, _ := parseNumber(e.text)
				cd.nums = append(cd.nums, f)
			default:
				return policyError(e.start, msgABListType)
			}
		}
		if (len(cd.strs) > 0) == (len(cd.nums) > 0) {
			return policyError(v.start, msgABMixed)
		}
		cd.op = opAnythingBut
	case nString:
		cd.op, cd.strs = opAnythingBut, []string{v.text}
	case nNumber:
		f, _ := parseNumber(v.text)
		cd.op, cd.nums = opAnythingBut, []float64{f}
	default:
		return policyError(v.start, msgABScalarType)
	}
	return nil
}

// parseCIDR parses a cidr condition the way AWS does, returning the
// inclusive address range it covers or AWS's reason for refusing it.
//
// AWS's range starts at the address as written, not at the network
// address: "10.0.0.128/24" covers 10.0.0.128 to 10.0.0.255. Masks of /32
// (IPv4) and /128 (IPv6) are refused.
func parseCIDR(s string) (lo, hi netip.Addr, reason string) {
	// Java's String.split drops trailing empty parts; AWS's check counts
	// what is left.
	parts := strings.Split(s, "/")
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) != 2 {
		return lo, hi, msgCIDRSlash
	}
	bits, ok := parseJavaInt(parts[1])
	if !ok {
		return lo, hi, msgCIDRMaskInt
	}
	if bits < 0 {
		return lo, hi, msgCIDRMaskNegative
	}
	addr, ok := parseIP(parts[0])
	if !ok {
		return lo, hi, "Nonstandard IP address: " + parts[0]
	}
	if addr.Is4() {
		if bits > 31 {
			return lo, hi, msgCIDRMask4
		}
		b := addr.As4()
		setHostBits(b[:], 32-bits)
		return addr, netip.AddrFrom4(b), ""
	}
	if bits > 127 {
		return lo, hi, msgCIDRMask6
	}
	b := addr.As16()
	setHostBits(b[:], 128-bits)
	return addr, netip.AddrFrom16(b), ""
}

// setHostBits sets the low n bits of the big-endian address b.
func setHostBits(b []byte, n int) {
	for i := len(b) - 1; i >= 0 && n > 0; i-- {
		if n >= 8 {
			b[i] = 0xff
		} else {
			b[i] |= byte(1)<<n - 1
		}
		n -= 8
	}
}

// parseJavaInt accepts what Java's Integer.parseInt accepts: an optional
// sign and decimal digits within 32 bits.
func parseJavaInt(s string) (int, bool) {
	i, neg := 0, false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return 0, false
	}
	n := 0
	for ; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
		if n > 1<<31 {
			return 0, false
		}
	}
	if neg {
		n = -n
	}
	if n > 1<<31-1 {
		return 0, false
	}
	return n, true
}

// parseIP parses an IPv4 or IPv6 address literal without a zone. An
// IPv4-mapped IPv6 address is treated as the IPv4 address, as Java does.
func parseIP(s string) (netip.Addr, bool) {
	if strings.IndexByte(s, '%') >= 0 {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}
