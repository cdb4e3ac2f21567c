package filter

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The policy is parsed by hand rather than with encoding/json because AWS's
// validation depends on things encoding/json hides: the order of keys, the
// literal text of numbers, and the exact position and wording of syntax
// errors (AWS reports those in Jackson's words, which clients sometimes
// show to users).

type nodeKind uint8

const (
	nObject nodeKind = iota + 1
	nArray
	nString
	nNumber
	nTrue
	nFalse
	nNull
)

// node is one value of a parsed policy.
type node struct {
	kind nodeKind
	// text is the content of a string or the literal text of a number.
	text string
	// keys and vals hold an object's members in document order; a repeated
	// key replaces the earlier value in place, as a Jackson tree does.
	// vals also holds an array's elements.
	keys []string
	vals []*node
	// start and end are the byte offsets of the value in the policy.
	start, end int
}

// tokenText is what Jackson's getText() returns for the first token of
// the value, which AWS quotes in some messages ("Invalid member in numeric
// match: 1").
func (n *node) tokenText() string {
	switch n.kind {
	case nObject:
		return "{"
	case nArray:
		return "["
	case nTrue:
		return "true"
	case nFalse:
		return "false"
	case nNull:
		return "null"
	}
	return n.text
}

// maxNestingDepth mirrors Jackson's default StreamReadConstraints; it also
// keeps the recursive parser's stack bounded.
const maxNestingDepth = 1000

const validValues = "(JSON String, Number, Array, Object or token 'null', 'true' or 'false')"

type jsonParser struct {
	src   string
	pos   int
	depth int
}

// parseJSON parses the policy text. Content after the first complete value
// is ignored, as Jackson's readTree ignores trailing tokens by default.
func parseJSON(src string) (*node, *Error) {
	p := &jsonParser{src: src}
	if err := p.skipSpace(); err != nil {
		return nil, err
	}
	if p.pos >= len(p.src) {
		return nil, p.fail(p.pos, "No content to map due to end-of-input")
	}
	return p.value()
}

// fail builds a parse error in the shape AWS returns: Jackson's message
// followed by its location line.
func (p *jsonParser) fail(pos int, format string, args ...any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	line, col := p.location(pos)
	return policyError(pos, "failed to parse JSON. %s\n at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: %d, column: %d]", msg, line, col)
}

// location returns Jackson's 1-based line and column (in characters) of a
// byte offset.
func (p *jsonParser) location(pos int) (line, col int) {
	if pos > len(p.src) {
		pos = len(p.src)
	}
	before := p.src[:pos]
	line = 1 + strings.Count(before, "\n")
	if i := strings.LastIndexByte(before, '\n'); i >= 0 {
		before = before[i+1:]
	}
	return line, utf8.RuneCountInString(before) + 1
}

// charDesc describes a character the way Jackson does in its messages.
func charDesc(r rune) string {
	if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
		return fmt.Sprintf("(CTRL-CHAR, code %d)", r)
	}
	if r > 255 {
		return fmt.Sprintf("'%c' (code %d / 0x%x)", r, r, r)
	}
	return fmt.Sprintf("'%c' (code %d)", r, r)
}

func (p *jsonParser) charAt(pos int) string {
	r, _ := utf8.DecodeRuneInString(p.src[pos:])
	return charDesc(r)
}

func (p *jsonParser) skipSpace() *Error {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		case c < 0x20:
			return p.fail(p.pos, "Illegal character (%s): only regular white space (\\r, \\n, \\t) is allowed between tokens", charDesc(rune(c)))
		default:
			return nil
		}
	}
	return nil
}

func (p *jsonParser) eofIn(kind string, start int) *Error {
	line, col := p.location(start)
	return p.fail(len(p.src), "Unexpected end-of-input: expected close marker for %s (start marker at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: %d, column: %d])", kind, line, col)
}

func (p *jsonParser) badClose(c byte, kind string, start int) *Error {
	want := byte('}')
	if kind == "Array" {
		want = ']'
	}
	line, col := p.location(start)
	return p.fail(p.pos, "Unexpected close marker '%c': expected '%c' (for %s starting at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: %d, column: %d])", c, want, kind, line, col)
}

// value parses the value starting at p.pos, which is not white space and
// not the end of input.
func (p *jsonParser) value() (*node, *Error) {
	c := p.src[p.pos]
	switch {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		start := p.pos
		s, err := p.str(false)
		if err != nil {
			return nil, err
		}
		return &node{kind: nString, text: s, start: start, end: p.pos}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case isIdentByte(c):
		start := p.pos
		for p.pos < len(p.src) && isIdentByte(p.src[p.pos]) {
			p.pos++
		}
		n := &node{start: start, end: p.pos}
		switch tok := p.src[start:p.pos]; tok {
		case "true":
			n.kind = nTrue
		case "false":
			n.kind = nFalse
		case "null":
			n.kind = nNull
		default:
			return nil, p.fail(start, "Unrecognized token '%s': was expecting %s", tok, validValues)
		}
		return n, nil
	}
	return nil, p.fail(p.pos, "Unexpected character (%s): expected a valid value %s", p.charAt(p.pos), validValues)
}

// isIdentByte approximates Java's identifier characters, which Jackson
// gathers into the token it quotes for an unrecognized word.
func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

func (p *jsonParser) enter() *Error {
	p.depth++
	if p.depth > maxNestingDepth {
		return p.fail(p.pos, "Document nesting depth (%d) exceeds the maximum allowed (%d, from `StreamReadConstraints.getMaxNestingDepth()`)", p.depth, maxNestingDepth)
	}
	return nil
}

func (p *jsonParser) object() (*node, *Error) {
	start := p.pos
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++ // '{'
	n := &node{kind: nObject, start: start}
	var index map[string]int // built once an object is large enough to need it
	first := true
	for {
		if err := p.skipSpace(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) {
			return nil, p.eofIn("Object", start)
		}
		c := p.src[p.pos]
		if first && c == '}' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		if first && c == ']' {
			return nil, p.badClose(c, "Object", start)
		}
		first = false
		if c != '"' {
			return nil, p.fail(p.pos, "Unexpected character (%s): was expecting double-quote to start field name", p.charAt(p.pos))
		}
		key, err := p.str(true)
		if err != nil {
			return nil, err
		}
		if err := p.skipSpace(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) {
			return nil, p.eofIn("Object", start)
		}
		if p.src[p.pos] != ':' {
			return nil, p.fail(p.pos, "Unexpected character (%s): was expecting a colon to separate field name and value", p.charAt(p.pos))
		}
		p.pos++
		if err := p.skipSpace(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) {
			return nil, p.eofIn("Object", start)
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if index == nil && len(n.keys) >= 16 {
			index = make(map[string]int, 2*len(n.keys))
			for i, k := range n.keys {
				index[k] = i
			}
		}
		dup := -1
		if index != nil {
			if i, ok := index[key]; ok {
				dup = i
			}
		} else {
			for i, k := range n.keys {
				if k == key {
					dup = i
					break
				}
			}
		}
		if dup >= 0 {
			n.vals[dup] = v
		} else {
			if index != nil {
				index[key] = len(n.keys)
			}
			n.keys = append(n.keys, key)
			n.vals = append(n.vals, v)
		}
		if err := p.skipSpace(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) {
			return nil, p.eofIn("Object", start)
		}
		switch c := p.src[p.pos]; c {
		case ',':
			p.pos++
		case '}':
			p.pos++
			n.end = p.pos
			return n, nil
		case ']':
			return nil, p.badClose(c, "Object", start)
		default:
			return nil, p.fail(p.pos, "Unexpected character (%s): was expecting comma to separate Object entries", p.charAt(p.pos))
		}
	}
}

func (p *jsonParser) array() (*node, *Error) {
	start := p.pos
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.pos++ // '['
	n := &node{kind: nArray, start: start}
	first := true
	for {
		if err := p.skipSpace(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) {
			return nil, p.eofIn("Array", start)
		}
		c := p.src[p.pos]
		if first && c == ']' {
			p.pos++
			n.end = p.pos
			return n, nil
		}
		if first && c == '}' {
			return nil, p.badClose(c, "Array", start)
		}
		first = false
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		n.vals = append(n.vals, v)
		if err := p.skipSpace(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) {
			return nil, p.eofIn("Array", start)
		}
		switch c := p.src[p.pos]; c {
		case ',':
			p.pos++
		case ']':
			p.pos++
			n.end = p.pos
			return n, nil
		case '}':
			return nil, p.badClose(c, "Array", start)
		default:
			return nil, p.fail(p.pos, "Unexpected character (%s): was expecting comma to separate Array entries", p.charAt(p.pos))
		}
	}
}

// str parses a string starting at the opening quote and returns its
// content, unescaped.
func (p *jsonParser) str(name bool) (string, *Error) {
	p.pos++ // opening quote
	start := p.pos
	// Fast path: no escapes, so the content is a slice of the source.
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '"' {
			s := p.src[start:p.pos]
			p.pos++
			return s, nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.pos++
	}
	var b strings.Builder
	b.WriteString(p.src[start:p.pos])
	for {
		if p.pos >= len(p.src) {
			if name {
				return "", p.fail(p.pos, "Unexpected end-of-input in field name")
			}
			return "", p.fail(p.pos, "Unexpected end-of-input: was expecting closing quote for a string value")
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c < 0x20:
			what := "string value"
			if name {
				what = "name"
			}
			return "", p.fail(p.pos, "Illegal unquoted character (%s): has to be escaped using backslash to be included in %s", charDesc(rune(c)), what)
		case c != '\\':
			b.WriteByte(c)
			p.pos++
			continue
		}
		p.pos++ // backslash
		if p.pos >= len(p.src) {
			return "", p.fail(p.pos, "Unexpected end-of-input in character escape sequence")
		}
		e := p.src[p.pos]
		p.pos++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return "", err
			}
			// Join a surrogate pair written as two escapes.
			if r >= 0xd800 && r < 0xdc00 && strings.HasPrefix(p.src[p.pos:], `\u`) {
				save := p.pos
				p.pos += 2
				lo, err := p.hex4()
				if err != nil {
					return "", err
				}
				if lo >= 0xdc00 && lo < 0xe000 {
					r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
				} else {
					p.pos = save
				}
			}
			b.WriteRune(r)
		default:
			p.pos--
			return "", p.fail(p.pos, "Unrecognized character escape %s", p.charAt(p.pos))
		}
	}
}

func (p *jsonParser) hex4() (rune, *Error) {
	var r rune
	for i := 0; i < 4; i++ {
		if p.pos >= len(p.src) {
			return 0, p.fail(p.pos, "Unexpected end-of-input in character escape sequence")
		}
		c := p.src[p.pos]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.fail(p.pos, "Unexpected character (%s): expected a hex-digit for character escape sequence", p.charAt(p.pos))
		}
		r = r<<4 | rune(d)
		p.pos++
	}
	return r, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number parses a JSON number with the strict grammar Jackson applies.
func (p *jsonParser) number() (*node, *Error) {
	start := p.pos
	digitsAt := func(what string) *Error {
		if p.pos >= len(p.src) {
			return p.fail(p.pos, "Unexpected end-of-input in numeric value: %s", what)
		}
		if !isDigit(p.src[p.pos]) {
			return p.fail(p.pos, "Unexpected character (%s) in numeric value: %s", p.charAt(p.pos), what)
		}
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
		}
		return nil
	}
	if p.src[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.src) && p.src[p.pos] == '0' {
		p.pos++
		if p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			return nil, p.fail(p.pos, "Invalid numeric value: Leading zeroes not allowed")
		}
	} else if err := digitsAt("expected digit (0-9) to follow minus sign, for valid numeric value"); err != nil {
		return nil, err
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if err := digitsAt("Decimal point not followed by a digit"); err != nil {
			return nil, err
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if err := digitsAt("Exponent indicator not followed by a digit"); err != nil {
			return nil, err
		}
	}
	return &node{kind: nNumber, text: p.src[start:p.pos], start: start, end: p.pos}, nil
}

// writeJSON renders a parsed value compactly; Explain uses it to quote the
// policy's conditions.
func writeJSON(b *strings.Builder, n *node) {
	switch n.kind {
	case nObject:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(quoteJSON(k))
			b.WriteByte(':')
			writeJSON(b, n.vals[i])
		}
		b.WriteByte('}')
	case nArray:
		b.WriteByte('[')
		for i, v := range n.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, v)
		}
		b.WriteByte(']')
	case nString:
		b.WriteString(quoteJSON(n.text))
	default:
		b.WriteString(n.tokenText())
	}
}

// quoteJSON quotes s as a JSON string.
func quoteJSON(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
			i++
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
			i++
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b.WriteString(`\ufffd`)
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
		}
	}
	b.WriteByte('"')
	return b.String()
}
