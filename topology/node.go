package topology

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
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
func readTree(data []byte) (*node, error) {
	if len(data) > MaxFileSize {
		return nil, &syntaxError{msg: fmt.Sprintf("the file is %d bytes; a topology file may have at most %d (%d MiB)", len(data), MaxFileSize, MaxFileSize>>20)}
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		var ye interface {
			GetToken() *token.Token
			GetMessage() string
		}
		if errors.As(err, &ye) {
			return nil, &syntaxError{at: tokenPos(ye.GetToken()), msg: "YAML syntax: " + ye.GetMessage()}
		}
		return nil, &syntaxError{msg: "YAML syntax: " + err.Error()}
	}
	var docs []ast.Node
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			docs = append(docs, d.Body)
		}
	}
	switch len(docs) {
	case 0:
		return &node{kind: mapKind, at: pos{1, 1}, size: 1}, nil // an empty file declares nothing
	case 1:
	default:
		return nil, &syntaxError{at: tokenPos(docs[1].GetToken()), msg: "a topology file holds one YAML document, not several"}
	}
	c := &converter{anchors: map[string]*node{}}
	return c.convert(docs[0], 0)
}

type converter struct {
	anchors map[string]*node
	values  int
}

func (c *converter) fail(n ast.Node, format string, args ...any) error {
	return &syntaxError{at: tokenPos(n.GetToken()), msg: fmt.Sprintf(format, args...)}
}

// count charges one value against the budget. A node reached through an
// alias is charged again for every value under it, which is what bounds an
// exponential expansion.
func (c *converter) count(n ast.Node, k int) error {
	c.values += k
	if c.values > maxValues {
		return c.fail(n, "the file expands to more than %d values (YAML aliases repeat what they refer to); simplify it", maxValues)
	}
	return nil
}

func (c *converter) convert(n ast.Node, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, c.fail(n, "values nest deeper than %d levels", maxDepth)
	}
	if err := c.count(n, 1); err != nil {
		return nil, err
	}
	at := tokenPos(n.GetToken())
	switch v := n.(type) {
	case *ast.AnchorNode:
		out, err := c.convert(v.Value, depth)
		if err != nil {
			return nil, err
		}
		// Registered after its value, so an anchor cannot refer to itself.
		c.anchors[v.Name.String()] = out
		return out, nil
	case *ast.AliasNode:
		name := v.Value.String()
		target, ok := c.anchors[name]
		if !ok {
			return nil, c.fail(n, "YAML alias *%s refers to no anchor &%s before it", name, name)
		}
		if err := c.count(n, target.size); err != nil {
			return nil, err
		}
		return target, nil
	case *ast.TagNode:
		return c.convert(v.Value, depth)
	case *ast.DocumentNode:
		return c.convert(v.Body, depth)
	case *ast.MappingNode:
		return c.mapping(at, v.Values, depth)
	case *ast.MappingValueNode:
		return c.mapping(at, []*ast.MappingValueNode{v}, depth)
	case *ast.SequenceNode:
		out := &node{kind: seqKind, at: at, size: 1}
		for _, it := range v.Values {
			cn, err := c.convert(it, depth+1)
			if err != nil {
				return nil, err
			}
			out.items = append(out.items, cn)
			out.size += cn.size
		}
		return out, nil
	case *ast.NullNode:
		return &node{at: at, size: 1}, nil
	case *ast.BoolNode:
		return &node{at: at, value: v.Value, size: 1}, nil
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return &node{at: at, value: x, size: 1}, nil
		case uint64:
			return &node{at: at, value: x, size: 1}, nil
		}
		return &node{at: at, value: v.Value, size: 1}, nil
	case *ast.FloatNode:
		return &node{at: at, value: v.Value, size: 1}, nil
	case *ast.InfinityNode:
		return &node{at: at, value: math.Inf(1), size: 1}, nil
	case *ast.NanNode:
		return &node{at: at, value: math.NaN(), size: 1}, nil
	case *ast.StringNode:
		return &node{at: at, value: v.Value, size: 1}, nil
	case *ast.LiteralNode:
		return &node{at: at, value: v.Value.Value, size: 1}, nil
	case *ast.CommentGroupNode:
		return &node{at: at, size: 1}, nil
	}
	return nil, c.fail(n, "unexpected YAML %s", n.Type())
}

// mapping converts a mapping: its own keys first, then merge keys (<<),
// whose entries give way to the mapping's own.
func (c *converter) mapping(at pos, values []*ast.MappingValueNode, depth int) (*node, error) {
	out := &node{kind: mapKind, at: at, size: 1}
	for _, mv := range values {
		if _, ok := mv.Key.(*ast.MergeKeyNode); !ok {
			if err := c.addEntry(out, mv, depth); err != nil {
				return nil, err
			}
		}
	}
	for _, mv := range values {
		if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
			if err := c.merge(out, mv, depth); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// addEntry adds one key: value pair; a key written twice is an error.
func (c *converter) addEntry(m *node, mv *ast.MappingValueNode, depth int) error {
	key, err := c.convert(mv.Key, depth+1)
	if err != nil {
		return err
	}
	if key.kind != scalarKind {
		return c.fail(mv.Key, "a key must be a plain string, not %s", key.typeName())
	}
	ks := scalarString(key.value)
	for _, e := range m.entries {
		if e.key == ks {
			return &syntaxError{at: key.at, msg: fmt.Sprintf("key %q is already set at line %d, column %d", ks, e.at.line, e.at.col)}
		}
	}
	value, err := c.convert(mv.Value, depth+1)
	if err != nil {
		return err
	}
	m.entries = append(m.entries, entry{key: ks, at: key.at, value: value})
	m.size += value.size
	return nil
}

// merge adds the entries of the mappings a merge key (<<) names that the
// mapping does not set itself, as YAML's merge key does.
func (c *converter) merge(m *node, mv *ast.MappingValueNode, depth int) error {
	src, err := c.convert(mv.Value, depth+1)
	if err != nil {
		return err
	}
	sources := []*node{src}
	if src.kind == seqKind {
		sources = src.items
	}
	for _, s := range sources {
		if s.kind != mapKind {
			return c.fail(mv.Value, "a merge key (<<) takes a mapping or a list of mappings")
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
