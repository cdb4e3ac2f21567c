package topology

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// toYAML writes a JSON document as block-style YAML, keeping its key order
// (a struct's field order, a map's sorted keys). Strings are plain when YAML
// reads them back as the same string, and JSON-quoted (which YAML's
// double-quoted style reads) otherwise. Written by hand because
// go.yaml.in/yaml/v3's encoder keeps every event of the document in memory
// (over 100 MB for a 600 KB topology).
func toYAML(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	v, err := readValue(dec)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if m, ok := v.(ordered); ok && len(m) == 0 {
		return nil, nil // an empty topology is an empty file
	}
	writeValue(&b, v, 0, false)
	return b.Bytes(), nil
}

// ordered is a JSON object with its keys in document order.
type ordered []member

type member struct {
	key   string
	value any
}

func readValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := ordered{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				m = append(m, member{k.(string), v})
			}
			_, err := dec.Token()
			return m, err
		case '[':
			l := []any{}
			for dec.More() {
				v, err := readValue(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token()
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

// writeValue writes v at the given indentation. inline says the caller
// already wrote "key:" or "- " and a nested block starts on the next line
// (mappings) or the same line (list items).
func writeValue(b *bytes.Buffer, v any, indent int, inline bool) {
	pad := strings.Repeat("  ", indent)
	switch x := v.(type) {
	case ordered:
		if len(x) == 0 {
			b.WriteString(" {}\n")
			return
		}
		if inline {
			b.WriteString("\n")
		}
		for _, m := range x {
			b.WriteString(pad)
			b.WriteString(yamlString(m.key))
			b.WriteString(":")
			writeValue(b, m.value, indent+1, true)
		}
	case []any:
		if len(x) == 0 {
			b.WriteString(" []\n")
			return
		}
		if inline {
			b.WriteString("\n")
		}
		for _, it := range x {
			b.WriteString(pad)
			b.WriteString("-")
			if m, ok := it.(ordered); ok && len(m) > 0 {
				// The first key on the dash's line, the rest under it.
				b.WriteString(" ")
				b.WriteString(yamlString(m[0].key))
				b.WriteString(":")
				writeValue(b, m[0].value, indent+2, true)
				if len(m) > 1 {
					writeValue(b, m[1:], indent+1, false)
				}
				continue
			}
			writeValue(b, it, indent+1, true)
		}
	default:
		if !inline {
			b.WriteString(pad)
		}
		b.WriteString(" ")
		b.WriteString(scalarYAML(x))
		b.WriteString("\n")
	}
}

func scalarYAML(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		if x {
			return "true"
		}
		return "false"
	case json.Number:
		return x.String()
	case string:
		return yamlString(x)
	}
	return fmt.Sprint(v)
}

// plainRE is what may stay unquoted: it starts with a letter or one of a
// few safe characters and holds nothing YAML gives a meaning to (": ", " #",
// flow indicators, a leading indicator).
var (
	plainRE = regexp.MustCompile(`^[A-Za-z_/][A-Za-z0-9_./:@+*=()-]*( [A-Za-z0-9_./:@+*=()-]+)*$`)
	// Words YAML 1.1 or 1.2 read as something other than a string.
	reserved = map[string]bool{
		"true": true, "false": true, "yes": true, "no": true, "on": true, "off": true, "y": true, "n": true,
		"null": true, "~": true, ".inf": true, ".nan": true,
	}
)

func yamlString(s string) string {
	if plainRE.MatchString(s) && !reserved[strings.ToLower(s)] && !strings.Contains(s, ": ") && !strings.HasSuffix(s, ":") {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
