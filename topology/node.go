package topology

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
	yaml "go.yaml.in/yaml/v3"
)

// Limits that keep a hostile or mistaken file from taking the process
// down: its size, and the number of values once YAML aliases are expanded
// (an alias of an alias of ... doubles at each step: "billion laughs").
const (
	MaxFileSize = 4 << 20
	maxValues   = 1_000_000
	maxDepth    = 64
)

// pos is a line and column, 1-based.
type pos struct{ line, col int }

// kind is what a node holds.
type kind int

const (
	scalarKind kind = iota
	mapKind
	seqKind
)

// node is a YAML value with its position, aliases expanded and merge keys
// applied, so that the schema decoder never sees YAML's indirections.
type node struct {
	kind    kind
	at      pos
	entries []entry // mapKind, in file order
	items   []*node // seqKind
	value   any     // scalarKind: nil, bool, int64, uint64, float64 or string
	size    int     // values in this subtree, counting each alias in full
}

type entry struct {
	key   string
	at    pos // the key's position
	value *node
}

func (n *node) typeName() string {
	switch n.kind {
	case mapKind:
		return "an object"
	case seqKind:
		return "a list"
	}
	switch n.value.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case int64, uint64, float64:
		return "a number"
	}
	return "a string"
}

// plain returns the node as plain Go values (map[string]any, []any,
// scalars), for the JSON documents a file may embed.
func (n *node) plain() any {
	switch n.kind {
	case mapKind:
		m := make(map[string]any, len(n.entries))
		for _, e := range n.entries {
			m[e.key] = e.value.plain()
		}
		return m
	case seqKind:
		s := make([]any, len(n.items))
		for i, it := range n.items {
			s[i] = it.plain()
		}
		return s
	}
	return n.value
}

// syntaxError is a YAML error with its position.
type syntaxError struct {
	at  pos
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

func tokenPos(t *token.Token) pos {
	if t == nil || t.Position == nil {
		return pos{}
	}
	return pos{t.Position.Line, t.Position.Column}
}

// readTree parses YAML (or JSON, which YAML reads) into a node tree.
//
// go.yaml.in/yaml/v3 parses: it follows the YAML spec (aws:SourceArn is one
// key in a flow mapping) and is several times faster than goccy/go-yaml on
// big files. When it finds a syntax error, goccy/go-yaml is asked for its
// own, which names the right line and column and shows the cause.
func readTree(data []byte) (*node, error) {
	if len(data) > MaxFileSize {
		return nil, &syntaxError{msg: fmt.Sprintf("the file is %d bytes; a topology file may have at most %d (%d MiB)", len(data), MaxFileSize, MaxFileSize>>20)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return &node{kind: mapKind, at: pos{1, 1}, size: 1}, nil // an empty file declares nothing
		}
		return nil, syntax(data, err)
	}
	var second yaml.Node
	if err := dec.Decode(&second); err == nil {
		return nil, &syntaxError{at: pos{second.Line, second.Column}, msg: "a topology file holds one YAML document, not several"}
	} else if !errors.Is(err, io.EOF) {
		return nil, syntax(data, err)
	}
	c := &converter{memo: map[*yaml.Node]*node{}}
	return c.convert(&doc, 0)
}

// syntax is the error for a file yaml/v3 cannot parse: goccy/go-yaml's,
// with its position, when it finds one too.
func syntax(data []byte, err error) error {
	if _, gerr := parser.ParseBytes(data, 0); gerr != nil {
		var ye interface {
			GetToken() *token.Token
			GetMessage() string
		}
		if errors.As(gerr, &ye) {
			return &syntaxError{at: tokenPos(ye.GetToken()), msg: "YAML syntax: " + ye.GetMessage()}
		}
	}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if strings.HasPrefix(msg, "unknown anchor '") {
		name := strings.TrimSuffix(strings.TrimPrefix(msg, "unknown anchor '"), "' referenced")
		if i := bytes.Index(data, []byte("*"+name)); i >= 0 {
			line := bytes.Count(data[:i], []byte("\n")) + 1
			col := i - bytes.LastIndexByte(data[:i], '\n')
			return &syntaxError{at: pos{line, col}, msg: fmt.Sprintf("YAML alias *%s refers to no anchor &%s before it", name, name)}
		}
	}
	return &syntaxError{msg: "YAML syntax: " + msg}
}

type converter struct {
	memo   map[*yaml.Node]*node // anchored nodes, converted once
	values int
}

func (c *converter) fail(n *yaml.Node, format string, args ...any) error {
	return &syntaxError{at: pos{n.Line, n.Column}, msg: fmt.Sprintf(format, args...)}
}

// count charges values against the budget. A node reached through an
// alias is charged again for every value under it, which is what bounds an
// exponential expansion.
func (c *converter) count(n *yaml.Node, k int) error {
	c.values += k
	if c.values > maxValues {
		return c.fail(n, "the file expands to more than %d values (YAML aliases repeat what they refer to); simplify it", maxValues)
	}
	return nil
}

func (c *converter) convert(n *yaml.Node, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, c.fail(n, "values nest deeper than %d levels", maxDepth)
	}
	if err := c.count(n, 1); err != nil {
		return nil, err
	}
	at := pos{n.Line, n.Column}
	var out *node
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &node{kind: mapKind, at: at, size: 1}, nil
		}
		return c.convert(n.Content[0], depth)
	case yaml.AliasNode:
		target, ok := c.memo[n.Alias]
		if !ok {
			return nil, c.fail(n, "YAML alias *%s refers to no anchor &%s before it", n.Value, n.Value)
		}
		if err := c.count(n, target.size); err != nil {
			return nil, err
		}
		return target, nil
	case yaml.MappingNode:
		var err error
		if out, err = c.mapping(n, depth); err != nil {
			return nil, err
		}
	case yaml.SequenceNode:
		out = &node{kind: seqKind, at: at, size: 1}
		for _, it := range n.Content {
			cn, err := c.convert(it, depth+1)
			if err != nil {
				return nil, err
			}
			out.items = append(out.items, cn)
			out.size += cn.size
		}
	case yaml.ScalarNode:
		out = &node{at: at, value: scalar(n), size: 1}
	default:
		return nil, c.fail(n, "unexpected YAML node")
	}
	if n.Anchor != "" {
		c.memo[n] = out
	}
	return out, nil
}

// scalar is a scalar's value as YAML 1.2's core schema resolves it.
func scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(n.Value, 0, 64); err == nil {
			return u
		}
		var i int64
		if n.Decode(&i) == nil {
			return i
		}
	case "!!float":
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return f
		}
		var f float64
		if n.Decode(&f) == nil {
			return f
		}
	}
	return n.Value
}

// mapping converts a mapping: its own keys first, then merge keys (<<),
// whose entries give way to the mapping's own.
func (c *converter) mapping(n *yaml.Node, depth int) (*node, error) {
	out := &node{kind: mapKind, at: pos{n.Line, n.Column}, size: 1}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if err := c.addEntry(out, k, v, depth); err != nil {
			return nil, err
		}
	}
	for _, v := range merges {
		if err := c.merge(out, v, depth); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addEntry adds one key: value pair; a key written twice is an error.
func (c *converter) addEntry(m *node, k, v *yaml.Node, depth int) error {
	key, err := c.convert(k, depth+1)
	if err != nil {
		return err
	}
	if key.kind != scalarKind {
		return c.fail(k, "a key must be a plain string, not %s", key.typeName())
	}
	ks := scalarString(key.value)
	for _, e := range m.entries {
		if e.key == ks {
			return &syntaxError{at: pos{k.Line, k.Column}, msg: fmt.Sprintf("key %q is already set at line %d, column %d", ks, e.at.line, e.at.col)}
		}
	}
	value, err := c.convert(v, depth+1)
	if err != nil {
		return err
	}
	m.entries = append(m.entries, entry{key: ks, at: pos{k.Line, k.Column}, value: value})
	m.size += value.size
	return nil
}

// merge adds the entries of the mappings a merge key (<<) names that the
// mapping does not set itself, as YAML's merge key does.
func (c *converter) merge(m *node, v *yaml.Node, depth int) error {
	src, err := c.convert(v, depth+1)
	if err != nil {
		return err
	}
	sources := []*node{src}
	if src.kind == seqKind {
		sources = src.items
	}
	for _, s := range sources {
		if s.kind != mapKind {
			return c.fail(v, "a merge key (<<) takes a mapping or a list of mappings")
		}
		for _, e := range s.entries {
			if !hasKey(m, e.key) {
				m.entries = append(m.entries, e)
				m.size += e.value.size
			}
		}
	}
	return nil
}

func hasKey(m *node, k string) bool {
	for _, e := range m.entries {
		if e.key == k {
			return true
		}
	}
	return false
}

func scalarString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}
