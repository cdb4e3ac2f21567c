package api

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/fanout/fanout/internal/jsondepth"
)

// decodeOnePass is decode for the requests clients send, in one pass over
// the body: it checks the JSON as jsondepth.Valid does while it indexes the
// request's members and batch entries, and builds the gjson values they
// hold, where the two-pass path validates the whole body and then walks it
// with gjson (which scans each batch entry again, and each message body
// once more). It gives up, reporting false with the decoder emptied, on
// whatever a well-formed request does not hold: invalid or too deep JSON,
// a member of the wrong shape, a null or non-object batch entry, more than
// maxIndexedEntries entries, a member name with an escape. The two-pass
// path then decodes the body and words its error, so both paths answer
// alike by construction.
func (d *jsonDecoder) decodeOnePass(body string) (*jsonInput, bool) {
	end, ok := d.object(body, jsondepth.SkipSpace(body, 0), 1, true)
	if !ok || jsondepth.SkipSpace(body, end) != len(body) {
		d.members, d.arena, d.entries = d.members[:0], d.arena[:0], d.entries[:0]
		d.moreEntries, d.entriesRaw = false, gjson.Result{}
		return nil, false
	}
	d.top = jsonInput{members: d.members, d: d}
	return &d.top, true
}

// object walks the object at s[i], nested depth deep (the request is 1),
// and indexes its known members: the request's (top) or a batch entry's,
// in a run of the arena. It returns the index after the object.
func (d *jsonDecoder) object(s string, i, depth int, top bool) (int, bool) {
	if i >= len(s) || s[i] != '{' || depth > jsondepth.Max {
		return 0, false
	}
	from := len(d.arena)
	i = jsondepth.SkipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1, true
	}
	for {
		end := jsondepth.StringEnd(s, i)
		if end < 0 {
			return 0, false
		}
		key := s[i+1 : end-1]
		if strings.IndexByte(key, '\\') >= 0 {
			return 0, false
		}
		if i = jsondepth.SkipSpace(s, end); i >= len(s) || s[i] != ':' {
			return 0, false
		}
		i = jsondepth.SkipSpace(s, i+1)
		sh, known := memberShape(key, top)
		var val gjson.Result
		var plain bool
		if known && sh == shapeEntries {
			if end = d.batchEntries(s, i, depth+1); end < 0 {
				return 0, false
			}
			val = gjson.Result{Type: gjson.JSON, Raw: s[i:end]}
			d.entriesRaw = val
		} else {
			if val, end, plain = valueAt(s, i, depth); end < 0 {
				return 0, false
			}
			if known && checkShape(val, sh) != nil {
				return 0, false
			}
		}
		if known && val.Type != gjson.Null {
			if top {
				d.members = addMember(d.members, 0, key, val, plain)
			} else {
				d.arena = addMember(d.arena, from, key, val, plain)
			}
		}
		if i = jsondepth.SkipSpace(s, end); i >= len(s) {
			return 0, false
		}
		switch s[i] {
		case ',':
			i = jsondepth.SkipSpace(s, i+1)
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// batchEntries walks the Entries array at s[i], nested depth deep, and
// indexes its entries; it returns the index after it, or -1.
func (d *jsonDecoder) batchEntries(s string, i, depth int) int {
	if i >= len(s) || s[i] != '[' || depth > jsondepth.Max {
		return -1
	}
	d.entries = d.entries[:0]
	i = jsondepth.SkipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1
	}
	for {
		if len(d.entries) == maxIndexedEntries {
			return -1
		}
		from := len(d.arena)
		end, ok := d.object(s, i, depth+1, false)
		if !ok {
			return -1
		}
		// The run's capacity ends where it does, as indexEntry's.
		d.entries = append(d.entries, jsonInput{members: d.arena[from:len(d.arena):len(d.arena)]})
		if i = jsondepth.SkipSpace(s, end); i >= len(s) {
			return -1
		}
		switch s[i] {
		case ',':
			i = jsondepth.SkipSpace(s, i+1)
		case ']':
			return i + 1
		default:
			return -1
		}
	}
}

// valueAt checks the value at s[i], inside a container nested depth deep,
// and returns it as gjson's walk would, with the index after it (-1 if it
// is not valid) and whether it is a plain string (jsondepth.PlainStringEnd).
// A string without escapes, the common case, is read here.
func valueAt(s string, i, depth int) (gjson.Result, int, bool) {
	if i < len(s) && s[i] == '"' {
		end, plain := jsondepth.PlainStringEnd(s, i)
		if end < 0 {
			return gjson.Result{}, -1, false
		}
		raw := s[i:end]
		if plain || strings.IndexByte(raw, '\\') < 0 {
			return gjson.Result{Type: gjson.String, Raw: raw, Str: raw[1 : len(raw)-1]}, end, plain
		}
		return gjson.Parse(raw), end, false
	}
	end := jsondepth.ValueEnd(s, i, jsondepth.Max-depth)
	if end < 0 {
		return gjson.Result{}, -1, false
	}
	if c := s[i]; c == '{' || c == '[' {
		return gjson.Result{Type: gjson.JSON, Raw: s[i:end]}, end, false
	}
	return gjson.Parse(s[i:end]), end, false
}
