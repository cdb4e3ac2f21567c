package topology

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// source remembers where Parse found each key, so that later errors (from
// Validate and Apply) can name the file, line and column.
type source struct {
	file string
	at   map[string]pos // key path -> the key's position
	// prefix is the path of the namespace section this source reads
	// ("namespaces[1]."), "" for the file's root.
	prefix string
}

// within is the source of the section at prefix of the same file.
func (s *source) within(prefix string) *source {
	if s == nil {
		return &source{prefix: prefix}
	}
	return &source{file: s.file, at: s.at, prefix: prefix}
}

func (s *source) errorAt(path, msg string) *Error {
	if s != nil && s.prefix != "" {
		path = strings.TrimSuffix(s.prefix+path, ".")
	}
	e := &Error{Path: path, Message: msg}
	if s != nil {
		e.File = s.file
		// A path the file does not spell out (a default) is reported at the
		// nearest key it does.
		for p := path; p != ""; p = parent(p) {
			if at, ok := s.at[p]; ok {
				e.Line, e.Column = at.line, at.col
				break
			}
		}
	}
	return e
}

// parent is the path one level up: a.b[1].c -> a.b[1] -> a.b -> a.
func parent(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// ReadFile reads and parses a topology file. A file larger than
// MaxFileSize, a directory or an unreadable file is an error.
func ReadFile(name string) (*Topology, error) {
	fail := func(msg string) error { return Errors{{File: name, Message: msg}} }
	f, err := os.Open(name)
	if err != nil {
		return nil, fail(strings.TrimPrefix(err.Error(), "open "+name+": "))
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fail(err.Error())
	}
	if info.IsDir() {
		return nil, fail("is a directory, not a topology file")
	}
	if info.Size() > MaxFileSize {
		return nil, fail(fmt.Sprintf("the file is %d bytes; a topology file may have at most %d (%d MiB)", info.Size(), MaxFileSize, MaxFileSize>>20))
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fail(strings.TrimPrefix(err.Error(), "read "+name+": "))
	}
	return Parse(data, name)
}

// Parse reads a topology from YAML or JSON (the same schema). file names
// the source in errors. Every structural problem is reported (unknown keys
// with a "did you mean", values of the wrong type, two endpoints in one
// subscription), as Errors; semantic checks are Validate's.
func Parse(data []byte, file string) (*Topology, error) {
	root, err := readTree(data)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			return nil, Errors{{File: file, Line: se.at.line, Column: se.at.col, Message: se.msg}}
		}
		return nil, Errors{{File: file, Message: err.Error()}}
	}
	d := &decoder{src: &source{file: file, at: map[string]pos{}}}
	t := d.topology(root)
	if len(d.errs) > 0 {
		sortErrors(d.errs)
		return nil, d.errs
	}
	t.src = d.src
	return t, nil
}

func sortErrors(es Errors) {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Column < es[j].Column
	})
}

type decoder struct {
	src  *source
	errs Errors
}

func (d *decoder) fail(at pos, path, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.src.file, Line: at.line, Column: at.col, Path: path, Message: fmt.Sprintf(format, args...)})
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// object checks that n is a mapping whose keys are all in allowed, records
// their positions, and returns its entries.
func (d *decoder) object(n *node, path string, allowed []string) []entry {
	if n.kind == scalarKind && n.value == nil {
		return nil // "billing:" with nothing after it is an empty object
	}
	if n.kind != mapKind {
		d.fail(n.at, path, "must be an object, not %s", n.typeName())
		return nil
	}
	var out []entry
	for _, e := range n.entries {
		p := join(path, e.key)
		if !contains(allowed, e.key) {
			msg := fmt.Sprintf("unknown key %q", e.key)
			if s := closest(e.key, allowed); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += " (known keys: " + strings.Join(allowed, ", ") + ")"
			}
			d.fail(e.at, p, "%s", msg)
			continue
		}
		d.src.at[p] = e.at
		out = append(out, e)
	}
	return out
}

// names checks that n is a mapping of names (queue or topic names, tags)
// and records their positions.
func (d *decoder) names(n *node, path string) []entry {
	if n.kind == scalarKind && n.value == nil {
		return nil
	}
	if n.kind != mapKind {
		d.fail(n.at, path, "must be an object of names, not %s", n.typeName())
		return nil
	}
	for _, e := range n.entries {
		d.src.at[join(path, e.key)] = e.at
	}
	return n.entries
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *decoder) topology(n *node) *Topology {
	t := &Topology{}
	for _, e := range d.object(n, "", rootKeys) {
		switch e.key {
		case "queues":
			t.Queues = d.queues(e.value, "queues")
		case "topics":
			t.Topics = d.topics(e.value, "topics")
		case "namespaces":
			t.Namespaces = d.namespaces(e.value, "namespaces")
		}
	}
	return t
}

func (d *decoder) queues(n *node, path string) map[string]Queue {
	var out map[string]Queue
	for _, q := range d.names(n, path) {
		if out == nil {
			out = map[string]Queue{}
		}
		out[q.key] = d.queue(q.value, path+"."+q.key)
	}
	return out
}

func (d *decoder) topics(n *node, path string) map[string]Topic {
	var out map[string]Topic
	for _, tp := range d.names(n, path) {
		if out == nil {
			out = map[string]Topic{}
		}
		out[tp.key] = d.topic(tp.value, path+"."+tp.key)
	}
	return out
}

// namespaces reads the list of other accounts' and regions' sections.
func (d *decoder) namespaces(n *node, path string) []Namespace {
	if n.kind == scalarKind && n.value == nil {
		return nil
	}
	if n.kind != seqKind {
		d.fail(n.at, path, "must be a list of namespaces ({account, region, queues, topics}), not %s", n.typeName())
		return nil
	}
	var out []Namespace
	for i, it := range n.items {
		ip := path + "[" + strconv.Itoa(i) + "]"
		d.src.at[ip] = it.at
		var ns Namespace
		for _, e := range d.object(it, ip, namespaceKeys) {
			p := join(ip, e.key)
			switch e.key {
			case "account":
				ns.Account = d.text(e.value, p) // checked by checkSections
			case "region":
				ns.Region = d.text(e.value, p)
			case "queues":
				ns.Queues = d.queues(e.value, p)
			case "topics":
				ns.Topics = d.topics(e.value, p)
			}
		}
		out = append(out, ns) // its account, region and uniqueness: checkSections
	}
	return out
}

func (d *decoder) queue(n *node, path string) Queue {
	var q Queue
	for _, e := range d.object(n, path, queueKeys) {
		p := join(path, e.key)
		switch e.key {
		case "attributes":
			q.Attributes = d.attributes(e.value, p, queueAttrs)
		case "redrive":
			q.Redrive = d.redrive(e.value, p, true)
		case "policy":
			q.Policy = d.document(e.value, p)
		case "tags":
			q.Tags = d.tags(e.value, p)
		}
	}
	return q
}

func (d *decoder) topic(n *node, path string) Topic {
	var t Topic
	for _, e := range d.object(n, path, topicKeys) {
		p := join(path, e.key)
		switch e.key {
		case "attributes":
			t.Attributes = d.attributes(e.value, p, topicAttrs)
		case "policy":
			t.Policy = d.document(e.value, p)
		case "tags":
			t.Tags = d.tags(e.value, p)
		case "subscriptions":
			if e.value.kind == scalarKind && e.value.value == nil {
				continue
			}
			if e.value.kind != seqKind {
				d.fail(e.value.at, p, "must be a list of subscriptions, not %s", e.value.typeName())
				continue
			}
			for i, it := range e.value.items {
				ip := p + "[" + strconv.Itoa(i) + "]"
				d.src.at[ip] = it.at
				t.Subscriptions = append(t.Subscriptions, d.subscription(it, ip))
			}
		}
	}
	return t
}

func (d *decoder) subscription(n *node, path string) Subscription {
	var s Subscription
	for _, e := range d.object(n, path, subscriptionKeys) {
		p := join(path, e.key)
		switch e.key {
		case "filterPolicy":
			s.FilterPolicy = d.document(e.value, p)
		case "deliveryPolicy":
			s.DeliveryPolicy = d.document(e.value, p)
		case "replayPolicy":
			s.ReplayPolicy = d.document(e.value, p)
		case "redrive":
			s.Redrive = d.redrive(e.value, p, false)
		case "raw":
			b, ok := e.value.value.(bool)
			if e.value.kind != scalarKind || !ok {
				d.fail(e.value.at, p, "must be true or false, not %s", e.value.typeName())
			}
			s.Raw = b
		default:
			v := d.text(e.value, p)
			switch e.key {
			case "filterPolicyScope":
				s.FilterPolicyScope = v
			case "subscriptionRoleArn":
				s.SubscriptionRoleArn = v
			case "protocol":
				s.Protocol = v
			case "endpoint":
				s.Endpoint = v
			default:
				*s.endpointField(e.key) = v
			}
		}
	}
	return s
}

// endpointField is the field of a short-form endpoint key.
func (s *Subscription) endpointField(key string) *string {
	switch key {
	case "queue":
		return &s.Queue
	case "http":
		return &s.HTTP
	case "https":
		return &s.HTTPS
	case "lambda":
		return &s.Lambda
	case "email":
		return &s.Email
	case "email-json":
		return &s.EmailJSON
	case "sms":
		return &s.SMS
	case "firehose":
		return &s.Firehose
	case "application":
		return &s.Application
	}
	panic("topology: no endpoint key " + key)
}

func (d *decoder) redrive(n *node, path string, queue bool) *Redrive {
	r := &Redrive{}
	allowed := redriveKeys
	if !queue {
		allowed = redriveKeys[:1] // a subscription's DLQ takes no receive count
	}
	found := false
	for _, e := range d.object(n, path, allowed) {
		p := join(path, e.key)
		switch e.key {
		case "deadLetterQueue":
			r.DeadLetterQueue = d.text(e.value, p)
			found = true
		case "maxReceiveCount":
			v, ok := wholeNumber(e.value.value)
			switch {
			case !ok:
				d.fail(e.value.at, p, "must be a whole number, not %s", e.value.typeName())
			case v < 1 || v > math.MaxInt32:
				d.fail(e.value.at, p, "must be a whole number from 1")
			default:
				r.MaxReceiveCount = int(v)
			}
		}
	}
	if !found && n.kind == mapKind {
		d.fail(n.at, path, "names no deadLetterQueue")
	}
	return r
}

// text is a string-valued key; numbers and booleans are taken as written.
func (d *decoder) text(n *node, path string) string {
	if n.kind != scalarKind || n.value == nil {
		d.fail(n.at, path, "must be a string, not %s", n.typeName())
		return ""
	}
	return scalarString(n.value)
}

// document is a JSON document: an object (or list) in the file, or its
// JSON text as a string.
func (d *decoder) document(n *node, path string) any {
	if n.kind == scalarKind {
		if s, ok := n.value.(string); ok {
			return s
		}
		d.fail(n.at, path, "must be an object (or its JSON text), not %s", n.typeName())
		return nil
	}
	return n.plain()
}

func (d *decoder) tags(n *node, path string) map[string]string {
	out := map[string]string{}
	for _, e := range d.names(n, path) {
		if e.value.kind != scalarKind {
			d.fail(e.value.at, join(path, e.key), "a tag's value must be a string, not %s", e.value.typeName())
			continue
		}
		out[e.key] = scalarString(e.value.value)
	}
	return out
}

func (d *decoder) attributes(n *node, path string, known map[string]attrType) map[string]any {
	out := map[string]any{}
	names := sortedNames(known)
	for _, e := range d.names(n, path) {
		p := join(path, e.key)
		typ, ok := known[e.key]
		if !ok {
			msg := fmt.Sprintf("unknown attribute %q", e.key)
			if s := closest(e.key, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			d.fail(e.at, p, "%s", msg)
			continue
		}
		v := e.value
		switch {
		case typ == docAttr:
			out[e.key] = d.document(v, p)
		case v.kind != scalarKind || v.value == nil:
			d.fail(v.at, p, "must be %s, not %s", typ, v.typeName())
		default:
			out[e.key] = v.value
		}
	}
	return out
}

func (t attrType) String() string {
	switch t {
	case intAttr:
		return "a number"
	case boolAttr:
		return "true or false"
	case docAttr:
		return "an object"
	}
	return "a string"
}

// Load reads, parses and validates a topology file, reporting every
// problem found: structural ones (syntax, unknown keys, wrong types) and,
// when there are none, the engines' own.
func Load(name string, opts Options) (*Topology, error) {
	t, err := ReadFile(name)
	if err != nil {
		return nil, err
	}
	if err := Validate(t, opts); err != nil {
		return nil, err
	}
	return t, nil
}

func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}
