package filter

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/fanout/fanout/internal/jsondepth"
)

// Body matching reads the JSON body with gjson as it goes, without building
// a tree of it.
//
// A policy path such as "a.b.c" is compared with the payload flattened the
// same way, so it is reached through {"a":{"b":{"c":..}}} as well as through
// {"a.b":{"c":..}} or {"a.b.c":..}. A payload key that is a dotted prefix of
// the path is a "route" into the payload.
//
// Arrays are transparent: a value inside an array is found under the
// array's path. When an array holds objects, the keys of one alternative
// must all be satisfied inside the same element, which is what flattening
// the payload into one record per choice of array elements and asking that
// one record match gives (the behaviour AWS shows for S3 event records).
// The evaluation below gets the same answer without building those
// records: an array matches a set of keys when one of its elements does.

// Work on a body is bounded so that no message, however it is built, can
// make Match slow. Two budgets apply per Match; past either, the message
// does not match (a deterministic answer, reached only by pathological
// bodies).
const (
	// enumerationBudget bounds the combinations tried when a payload
	// offers several routes to the same path (both "a" and "a.b" as keys,
	// or a repeated key).
	enumerationBudget = 256
	// scanPerAlternative and maxScan bound the bytes gjson is asked to
	// scan. gjson re-scans a nested value at each level it is entered
	// from, so a body nested thousands of levels deep would otherwise
	// cost time quadratic in its size. Ordinary bodies need a few times
	// their size per alternative.
	scanPerAlternative = 16
	maxScan            = 256 << 20
	minScan            = 1 << 20
	// routeCost is what a route is charged, in bytes scanned.
	routeCost = 64
)

// Which outcomes may satisfy an item: a present value matching one of its
// conditions, absence (through {"exists":false}), or either.
const (
	allowPresent uint8 = 1 << iota
	allowAbsent
	allowBoth = allowPresent | allowAbsent
)

// item is a key of the alternative being matched, part way down its path.
type item struct {
	k *keyMatcher
	// rem is the part of the path still to find; leaf means the path has
	// been consumed and the value at hand is the key's value.
	rem  string
	leaf bool
	mode uint8
}

func (it *item) present(v *value) bool {
	return it.mode&allowPresent != 0 && it.k.anyMatch(v)
}

func (it *item) absent() bool {
	return it.mode&allowAbsent != 0 && it.k.existsFalse
}

// canBePresent reports whether some condition can accept a present value
// (anything but {"exists":false}).
func (k *keyMatcher) canBePresent() bool {
	for i := range k.conds {
		if c := &k.conds[i]; c.op != opExists || c.exists {
			return true
		}
	}
	return false
}

func allAbsent(items []item) bool {
	for i := range items {
		if !items[i].absent() {
			return false
		}
	}
	return true
}

type bodyMatcher struct {
	budget int // combinations left to enumerate
	scan   int // bytes left to scan
	// exhausted is set once a budget runs out; everything then fails.
	exhausted bool
}

func newBodyMatcher(body string, alternatives int) *bodyMatcher {
	scan := min(scanPerAlternative*alternatives*len(body), maxScan) + minScan
	return &bodyMatcher{budget: enumerationBudget, scan: scan}
}

// spend accounts for n bytes' worth of work and reports whether work may
// go on.
func (bm *bodyMatcher) spend(n int) bool {
	bm.scan -= n
	if bm.scan < 0 {
		bm.exhausted = true
	}
	return !bm.exhausted
}

// charge accounts for scanning v.
func (bm *bodyMatcher) charge(v gjson.Result) bool { return bm.spend(len(v.Raw)) }

// validJSON reports whether s is JSON that AWS would parse, nested no
// deeper than Jackson allows: one flat pass, with no recursion (gjson's
// validator recurses once per level: a 256 KiB body of '[' would cost it
// about 50 MB of stack).
func validJSON(s string) bool {
	return jsondepth.Valid(s, maxNestingDepth)
}

// parseBody checks that the body is a JSON object; anything else matches
// no body-scope policy.
func parseBody(body string) (gjson.Result, bool) {
	if !validJSON(body) {
		return gjson.Result{}, false
	}
	r := gjson.Parse(body)
	return r, r.IsObject()
}

func (p *Policy) matchBody(body string) bool {
	matched, _ := p.bodyMatch(body)
	return matched
}

// bodyMatch also reports whether a work budget ran out, which forces the
// answer to false.
func (p *Policy) bodyMatch(body string) (matched, exhausted bool) {
	root, ok := parseBody(body)
	if !ok {
		return false, false
	}
	bm := newBodyMatcher(body, len(p.alts))
	for _, a := range p.alts {
		if bm.alternative(root, a) && !bm.exhausted {
			return true, false
		}
		if bm.exhausted {
			return false, true
		}
	}
	return false, false
}

func (bm *bodyMatcher) alternative(root gjson.Result, a *alternative) bool {
	var buf [MaxKeys]item
	items := buf[:0]
	for _, k := range a.keys {
		items = append(items, item{k: k, rem: k.path, mode: allowBoth})
	}
	return bm.object(root, items)
}

// value tests items against a JSON value: leaf items against the value
// itself, the others against its members.
func (bm *bodyMatcher) value(v gjson.Result, items []item) bool {
	if v.IsArray() {
		if !bm.charge(v) {
			return false
		}
		elements, ok := 0, false
		v.ForEach(func(_, e gjson.Result) bool {
			elements++
			ok = bm.value(e, items)
			return !ok
		})
		if elements == 0 {
			// An empty array contributes nothing: the keys are absent.
			return allAbsent(items)
		}
		return ok
	}
	var restBuf [MaxKeys]item
	rest := restBuf[:0]
	var val value
	converted := false
	for i := range items {
		it := &items[i]
		if !it.leaf {
			rest = append(rest, *it)
			continue
		}
		if v.IsObject() {
			// Only leaves have values: a key holding an object is
			// absent as far as its conditions go.
			if !it.absent() {
				return false
			}
			continue
		}
		if !converted {
			val, converted = resultValue(v), true
		}
		if !it.present(&val) {
			return false
		}
	}
	if len(rest) == 0 {
		return true
	}
	if !v.IsObject() {
		return allAbsent(rest)
	}
	return bm.object(v, rest)
}

// route is a way into an object for an item: through member number member,
// whose value is val, continuing as sub.
type route struct {
	item, member int
	val          gjson.Result
	sub          item
}

// object tests items (none of them leaves) against the members of a JSON
// object.
func (bm *bodyMatcher) object(obj gjson.Result, items []item) bool {
	if !bm.charge(obj) {
		return false
	}
	var routeBuf [MaxKeys]route
	routes := routeBuf[:0]
	member := 0
	obj.ForEach(func(key, val gjson.Result) bool {
		name := key.Str
		for i := range items {
			it := &items[i]
			switch {
			case it.rem == name:
				routes = append(routes, route{item: i, member: member, val: val, sub: item{k: it.k, leaf: true, mode: it.mode}})
			case len(it.rem) > len(name) && it.rem[len(name)] == '.' && strings.HasPrefix(it.rem, name):
				routes = append(routes, route{item: i, member: member, val: val, sub: item{k: it.k, rem: it.rem[len(name)+1:], mode: it.mode}})
			}
		}
		member++
		return true
	})
	// Each route costs work of its own, beyond the bytes scanned.
	if !bm.spend(routeCost * len(routes)) {
		return false
	}
	var countBuf [MaxKeys]int
	var counts []int
	if len(items) <= MaxKeys {
		counts = countBuf[:len(items)]
	} else {
		counts = make([]int, len(items))
	}
	several := false
	for _, r := range routes {
		counts[r.item]++
		if counts[r.item] > 1 {
			several = true
		}
	}
	if !several {
		return bm.routed(routes, items)
	}
	e := &enumeration{routes: routes, counts: counts, items: items, choice: make([]int, len(items))}
	return bm.enumerate(e, 0)
}

// routed evaluates items that each take at most the given routes: routes
// into the same member are evaluated together, so that they see the same
// array elements; items without a route are absent.
func (bm *bodyMatcher) routed(routes []route, items []item) bool {
	var seenBuf [MaxKeys]bool
	var seen []bool
	if len(items) <= MaxKeys {
		seen = seenBuf[:len(items)]
	} else {
		seen = make([]bool, len(items))
	}
	var subBuf [MaxKeys]item
	for i := 0; i < len(routes); {
		j := i
		subs := subBuf[:0]
		for ; j < len(routes) && routes[j].member == routes[i].member; j++ {
			subs = append(subs, routes[j].sub)
			seen[routes[j].item] = true
		}
		if !bm.value(routes[i].val, subs) {
			return false
		}
		i = j
	}
	for i := range items {
		if !seen[i] && !items[i].absent() {
			return false
		}
	}
	return true
}

// enumeration is the state of a search over routes, for items with
// several routes into one object.
type enumeration struct {
	routes []route
	counts []int // routes per item
	items  []item
	// choice[i] is, for an item with several routes, the index of the
	// route it takes among its own, or -1 for "absent along all".
	choice []int
}

// enumerate handles items with several routes. Their value set is the
// union over the routes, so such an item is satisfied either by a matching
// value along one route (tried in turn) or by absence along all of them.
// It chooses for items i onwards.
func (bm *bodyMatcher) enumerate(e *enumeration, i int) bool {
	if bm.exhausted {
		return false
	}
	if i < len(e.items) {
		it := &e.items[i]
		if e.counts[i] <= 1 {
			return bm.enumerate(e, i+1)
		}
		if it.mode&allowPresent != 0 && it.k.canBePresent() {
			for c := 0; c < e.counts[i]; c++ {
				e.choice[i] = c
				if bm.enumerate(e, i+1) {
					return true
				}
			}
		}
		if it.absent() {
			e.choice[i] = -1
			return bm.enumerate(e, i+1)
		}
		return false
	}
	if bm.budget <= 0 {
		bm.exhausted = true
		return false
	}
	bm.budget--
	if !bm.spend(routeCost * len(e.routes)) {
		return false
	}
	sel := make([]route, 0, len(e.routes))
	nth := make([]int, len(e.items))
	for _, r := range e.routes {
		n := nth[r.item]
		nth[r.item]++
		switch {
		case e.counts[r.item] <= 1:
		case e.choice[r.item] == -1:
			r.sub.mode &= allowAbsent
		case e.choice[r.item] == n:
			r.sub.mode &= allowPresent
		default:
			continue
		}
		sel = append(sel, r)
	}
	return bm.routed(sel, e.items)
}
