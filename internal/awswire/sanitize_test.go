package awswire

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"testing"
	"unicode/utf8"
)

// Whatever a stored value holds, a reply stays valid UTF-8, valid JSON and
// well-formed XML: what cannot be carried becomes U+FFFD.
func TestRepliesNeverCarryInvalidText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, xml, json string }{
		{"String.\xff\x01", "String.\uFFFD\uFFFD", "String.\uFFFD\x01"},
		{"a\xc3", "a\uFFFD", "a\uFFFD"},
		{"nc\uFFFEx\uFFFF", "nc\uFFFDx\uFFFD", "nc\uFFFEx\uFFFF"},
		{"ok é 😀 \t\n\r&<", "ok é 😀 \t\n\r&<", "ok é 😀 \t\n\r&<"},
	} {
		var x XMLWriter
		x.Elem("v", c.in)
		var gotXML string
		if err := xml.Unmarshal(x.Buf, &gotXML); err != nil || !utf8.Valid(x.Buf) {
			t.Fatalf("%q -> %q: %v", c.in, x.Buf, err)
		}
		if gotXML != c.xml {
			t.Errorf("XML %q -> %q, want %q", c.in, gotXML, c.xml)
		}
		j := AppendJSONString(nil, c.in)
		var gotJSON string
		if !utf8.Valid(j) || !json.Valid(j) {
			t.Fatalf("%q -> invalid JSON %q", c.in, j)
		}
		_ = json.Unmarshal(j, &gotJSON)
		if gotJSON != c.json {
			t.Errorf("JSON %q -> %q, want %q", c.in, gotJSON, c.json)
		}
	}
	// Plain ASCII is copied as is.
	if got := AppendEscaped(nil, "plain text"); !bytes.Equal(got, []byte("plain text")) {
		t.Fatal(string(got))
	}
}
