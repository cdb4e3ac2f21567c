package main

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
)

// The null server should cost as little as possible, so that fanout/null
// ratios show fanout's own overhead; encoding/json into structs was most of
// its CPU per call. It only needs a few scalar members, so it walks the
// request with this small scanner instead.

var errBadJSON = errors.New("malformed JSON request")

// scanJSON walks the JSON document b and calls member for every scalar member
// of every object, with the depth of that object (1 for the top level), the
// member's key (raw, without quotes; keys never need unescaping here) and its
// raw value token. It calls end with the depth of each object that closes.
// It checks only the structure it needs to walk.
func scanJSON(b []byte, member func(depth int, key, raw []byte), end func(depth int)) error {
	s := jsonScan{b: b, member: member, end: end}
	s.space()
	if err := s.value(0, nil); err != nil {
		return err
	}
	if s.space(); s.i != len(s.b) {
		return errBadJSON
	}
	return nil
}

type jsonScan struct {
	b      []byte
	i      int
	member func(depth int, key, raw []byte)
	end    func(depth int)
}

func (s *jsonScan) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value; key is its member name when it sits in an object
// at depth, or nil in an array.
func (s *jsonScan) value(depth int, key []byte) error {
	if s.i >= len(s.b) {
		return errBadJSON
	}
	start := s.i
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object(depth + 1)
	case c == '[':
		return s.array(depth)
	case c == '"':
		if err := s.str(); err != nil {
			return err
		}
	default: // number, true, false, null
	scalar:
		for ; s.i < len(s.b); s.i++ {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				break scalar
			}
		}
		if s.i == start {
			return errBadJSON
		}
	}
	if key != nil && s.member != nil {
		s.member(depth, key, s.b[start:s.i])
	}
	return nil
}

// str skips a string token starting at the opening quote. It jumps from
// quote to quote (bytes.IndexByte is vectorised): a quote ends the token
// unless an odd run of backslashes precedes it.
func (s *jsonScan) str() error {
	s.i++
	for {
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			return errBadJSON
		}
		q := s.i + j
		n := 0
		for k := q - 1; k >= s.i && s.b[k] == '\\'; k-- {
			n++
		}
		s.i = q + 1
		if n%2 == 0 {
			return nil
		}
	}
}

func (s *jsonScan) object(depth int) error {
	s.i++ // '{'
	for first := true; ; first = false {
		s.space()
		if s.i < len(s.b) && s.b[s.i] == '}' && first {
			break
		}
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return errBadJSON
		}
		k0 := s.i
		if err := s.str(); err != nil {
			return err
		}
		key := s.b[k0+1 : s.i-1]
		if s.space(); s.i >= len(s.b) || s.b[s.i] != ':' {
			return errBadJSON
		}
		s.i++
		s.space()
		if err := s.value(depth, key); err != nil {
			return err
		}
		if s.space(); s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
			continue
		}
		if s.i >= len(s.b) || s.b[s.i] != '}' {
			return errBadJSON
		}
		break
	}
	s.i++ // '}'
	if s.end != nil {
		s.end(depth)
	}
	return nil
}

func (s *jsonScan) array(depth int) error {
	s.i++ // '['
	for first := true; ; first = false {
		s.space()
		if s.i < len(s.b) && s.b[s.i] == ']' && first {
			break
		}
		if err := s.value(depth, nil); err != nil {
			return err
		}
		if s.space(); s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
			continue
		}
		if s.i >= len(s.b) || s.b[s.i] != ']' {
			return errBadJSON
		}
		break
	}
	s.i++ // ']'
	return nil
}

// jsonString decodes a raw string token; the common case has no escapes.
func jsonString(raw []byte) (string, bool) {
	b, ok := jsonStringBytes(raw)
	return string(b), ok
}

func jsonStringBytes(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// appendMD5OfJSONString appends the hex MD5 of the decoded string raw, as
// SQS reports MD5OfMessageBody.
func appendMD5OfJSONString(out, raw []byte) ([]byte, bool) {
	b, ok := jsonStringBytes(raw)
	if !ok {
		return out, false
	}
	sum := md5.Sum(b)
	return hex.AppendEncode(out, sum[:]), true
}
