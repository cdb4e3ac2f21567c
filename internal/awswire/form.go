// Package awswire holds the codecs of AWS's wire protocols: Query form
// decoding (flattened lists and maps), XML and JSON replies, and error
// rendering for both. It knows nothing of queues or topics.
package awswire

import (
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Form is a Query-protocol request: form and query-string parameters, read
// through an optional prefix so that batch entries can be read like requests.
type Form struct {
	values url.Values
	prefix string
}

// NewForm wraps parsed parameters.
func NewForm(v url.Values) Form { return Form{values: v} }

// Get returns the first value of name, or "".
func (f Form) Get(name string) string {
	vs := f.values[f.prefix+name]
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// Has reports whether name was sent at all.
func (f Form) Has(name string) bool {
	_, ok := f.values[f.prefix+name]
	return ok
}

// Indexes returns, sorted, the N of every parameter named name.N or name.N.*
// (AWS numbers list items from 1 but does not require them to be contiguous).
func (f Form) Indexes(name string) []int {
	p := f.prefix + name + "."
	seen := map[int]bool{}
	for k := range f.values {
		if !strings.HasPrefix(k, p) {
			continue
		}
		rest := k[len(p):]
		if i := strings.IndexByte(rest, '.'); i >= 0 {
			rest = rest[:i]
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 1 {
			continue
		}
		seen[n] = true
	}
	out := make([]int, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// List returns the values of name.1, name.2, ... in index order.
func (f Form) List(name string) []string {
	idx := f.Indexes(name)
	if len(idx) == 0 {
		return nil
	}
	out := make([]string, 0, len(idx))
	for _, n := range idx {
		out = append(out, f.Get(name+"."+strconv.Itoa(n)))
	}
	return out
}

// Entries returns one Form per item of a flattened list of structures
// (name.1.*, name.2.*, ...), each reading its own item's members.
func (f Form) Entries(name string) []Form {
	idx := f.Indexes(name)
	out := make([]Form, 0, len(idx))
	for _, n := range idx {
		out = append(out, Form{values: f.values, prefix: f.prefix + name + "." + strconv.Itoa(n) + "."})
	}
	return out
}

// Map reads a flattened map (name.N.<key>, name.N.<value>) into a Go map.
func (f Form) Map(name, key, value string) map[string]string {
	entries := f.Entries(name)
	if len(entries) == 0 {
		return nil
	}
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		out[e.Get(key)] = e.Get(value)
	}
	return out
}
