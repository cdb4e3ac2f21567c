package topology

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(Schema, &s); err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	return s
}

func propertyNames(t *testing.T, schema map[string]any, def string) []string {
	t.Helper()
	obj := schema
	if def != "" {
		obj = schema["$defs"].(map[string]any)[def].(map[string]any)
	}
	var out []string
	for k := range obj["properties"].(map[string]any) {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

// TestSchemaListsWhatTheParserTakes: every key the parser accepts is in the
// schema, and every key of the schema is one the parser accepts.
func TestSchemaListsWhatTheParserTakes(t *testing.T) {
	t.Parallel()
	s := loadSchema(t)
	for _, c := range []struct {
		def  string
		keys []string
	}{
		{"", rootKeys},
		{"queue", queueKeys},
		{"queueRedrive", redriveKeys},
		{"subscriptionRedrive", redriveKeys[:1]},
		{"topic", topicKeys},
		{"namespace", namespaceKeys},
		{"subscription", subscriptionKeys},
		{"queueAttributes", sortedNames(queueAttrs)},
		{"topicAttributes", sortedNames(topicAttrs)},
	} {
		if got, want := propertyNames(t, s, c.def), sorted(c.keys); !reflect.DeepEqual(got, want) {
			t.Errorf("schema %q lists %v; the parser takes %v", c.def, got, want)
		}
	}
}

// TestExamplesMatchTheSchema checks every topology file of the repository
// (test data and examples) against the schema, structurally.
func TestExamplesMatchTheSchema(t *testing.T) {
	t.Parallel()
	s := loadSchema(t)
	files, _ := filepath.Glob("testdata/*.yaml")
	examples, _ := filepath.Glob("../examples/*/topology.yaml")
	files = append(files, examples...)
	if len(examples) == 0 {
		t.Error("no examples/*/topology.yaml")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		root, err := readTree(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		v := &validator{root: s}
		v.check(s, jsonValue(root.plain()), "")
		for _, e := range v.errs {
			t.Errorf("%s: %s", f, e)
		}
	}
	// And the validator does catch what the schema forbids.
	v := &validator{root: s}
	v.check(s, jsonValue(map[string]any{"queues": map[string]any{"a": map[string]any{"atributes": nil}}}), "")
	if len(v.errs) == 0 {
		t.Error("the validator let an unknown key through")
	}
}

// jsonValue turns YAML's values into JSON's (int64 -> float64).
func jsonValue(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// validator checks a value against the parts of JSON Schema that
// schema.json uses: type, properties, additionalProperties, items,
// required, oneOf, enum, minimum, maximum and $ref.
type validator struct {
	root map[string]any
	errs []string
}

func (v *validator) fail(path, format string, args ...any) {
	v.errs = append(v.errs, path+": "+fmt.Sprintf(format, args...))
}

func typeOf(x any) string {
	switch n := x.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if n == float64(int64(n)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "?"
}

func (v *validator) check(s map[string]any, x any, path string) {
	if ref, ok := s["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		v.check(v.root["$defs"].(map[string]any)[name].(map[string]any), x, path)
		return
	}
	if typ, ok := s["type"]; ok {
		var types []string
		switch tv := typ.(type) {
		case string:
			types = []string{tv}
		case []any:
			for _, e := range tv {
				types = append(types, e.(string))
			}
		}
		got := typeOf(x)
		match := false
		for _, want := range types {
			if want == got || (want == "number" && got == "integer") {
				match = true
			}
		}
		if !match {
			v.fail(path, "is %s, the schema wants %v", got, types)
			return
		}
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if reflect.DeepEqual(e, x) {
				found = true
			}
		}
		if !found {
			v.fail(path, "%v is not one of %v", x, enum)
		}
	}
	if n, ok := x.(float64); ok {
		if lo, ok := s["minimum"].(float64); ok && n < lo {
			v.fail(path, "%v is below %v", n, lo)
		}
		if hi, ok := s["maximum"].(float64); ok && n > hi {
			v.fail(path, "%v is above %v", n, hi)
		}
	}
	if m, ok := x.(map[string]any); ok {
		props, _ := s["properties"].(map[string]any)
		for k, e := range m {
			if ps, ok := props[k].(map[string]any); ok {
				v.check(ps, e, path+"."+k)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					v.fail(path, "key %q is not in the schema", k)
				}
			case map[string]any:
				v.check(ap, e, path+"."+k)
			}
		}
		for _, r := range asList(s["required"]) {
			if _, ok := m[r]; !ok {
				v.fail(path, "lacks %q", r)
			}
		}
		if one, ok := s["oneOf"].([]any); ok {
			n := 0
			for _, alt := range one {
				sub := &validator{root: v.root}
				sub.check(alt.(map[string]any), x, path)
				if len(sub.errs) == 0 {
					n++
				}
			}
			if n != 1 {
				v.fail(path, "matches %d of the schema's oneOf alternatives, not 1", n)
			}
		}
	}
	if a, ok := x.([]any); ok {
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range a {
				v.check(items, e, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
}

func asList(x any) []string {
	var out []string
	if l, ok := x.([]any); ok {
		for _, e := range l {
			out = append(out, e.(string))
		}
	}
	return out
}
