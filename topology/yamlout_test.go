package topology

import (
	"encoding/json"
	"testing"
)

// TestYAMLStringsReadBack: every string the writer emits, plain or quoted,
// reads back as itself, and keeps its type (a string that looks like a
// number or a boolean stays a string).
func TestYAMLStringsReadBack(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"", " a", "a ", "#x", "a #b", "a# b", "- x", "-", "yes", "No", "ON", "y", "123", "1e3", "0x1F", "0o17", ".5", "-1", "+1555",
		"@x", "`x", "a: b", "a:", ":a", "a:b", "{x}", "[x]", "x,y", "*", "*a", "&a", "!x", "%x", "|", ">", `"q"`, "'q'",
		"line\nbreak", "tab\tx", "ünï", "2020-01-01T00:00:00Z", "arn:aws:sqs:us-east-1:000000000000:q", "~", "null", "Null",
		"...", "---", "a\u2028b", "<<", "?", "? x", "x?", ".inf", "-.inf", ".NaN", "http://127.0.0.1:9000/hook", "sqs:SendMessage",
		"alias/aws/sqs", "a  b", "(x)", "a=b", "order_placed",
	} {
		doc, _ := json.Marshal(map[string]any{"k": s, s: "v"})
		out, err := toYAML(doc)
		if err != nil {
			t.Fatal(err)
		}
		n, err := readTree(out)
		if err != nil {
			t.Errorf("%q: %v\n%s", s, err, out)
			continue
		}
		back := n.plain().(map[string]any)
		if back["k"] != s || back[s] != "v" {
			t.Errorf("%q came back as %#v from\n%s", s, back, out)
		}
	}
}
