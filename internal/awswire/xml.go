package awswire

import (
	"encoding/base64"
	"strconv"
	"unicode/utf8"
)

// XMLWriter builds an XML reply by hand: AWS's shapes are simple and fixed,
// and writing them directly is both faster and more exact than encoding/xml.
type XMLWriter struct {
	Buf []byte
}

// Header writes the XML declaration AWS puts first.
func (w *XMLWriter) Header() { w.Buf = append(w.Buf, `<?xml version="1.0"?>`...) }

// Open writes <tag>.
func (w *XMLWriter) Open(tag string) {
	w.Buf = append(w.Buf, '<')
	w.Buf = append(w.Buf, tag...)
	w.Buf = append(w.Buf, '>')
}

// OpenNS writes <tag xmlns="ns">.
func (w *XMLWriter) OpenNS(tag, ns string) {
	w.Buf = append(w.Buf, '<')
	w.Buf = append(w.Buf, tag...)
	w.Buf = append(w.Buf, ` xmlns="`...)
	w.Buf = append(w.Buf, ns...)
	w.Buf = append(w.Buf, `">`...)
}

// Close writes </tag>.
func (w *XMLWriter) Close(tag string) {
	w.Buf = append(w.Buf, "</"...)
	w.Buf = append(w.Buf, tag...)
	w.Buf = append(w.Buf, '>')
}

// Empty writes <tag/>.
func (w *XMLWriter) Empty(tag string) {
	w.Buf = append(w.Buf, '<')
	w.Buf = append(w.Buf, tag...)
	w.Buf = append(w.Buf, "/>"...)
}

// Elem writes <tag>text</tag> with text escaped.
func (w *XMLWriter) Elem(tag, text string) {
	w.Open(tag)
	w.Buf = AppendEscaped(w.Buf, text)
	w.Close(tag)
}

// Int writes <tag>n</tag>.
func (w *XMLWriter) Int(tag string, n int64) {
	w.Open(tag)
	w.Buf = strconv.AppendInt(w.Buf, n, 10)
	w.Close(tag)
}

// Bool writes <tag>true|false</tag>.
func (w *XMLWriter) Bool(tag string, b bool) {
	w.Open(tag)
	w.Buf = strconv.AppendBool(w.Buf, b)
	w.Close(tag)
}

// MessageAttribute writes one SQS <MessageAttribute> as ReceiveMessage
// replies carry it: a binary value in base64, anything else as a string.
func (w *XMLWriter) MessageAttribute(name, dataType, stringValue string, binaryValue []byte) {
	w.Open("MessageAttribute")
	w.Elem("Name", name)
	w.Open("Value")
	if binaryValue != nil {
		w.Elem("BinaryValue", base64.StdEncoding.EncodeToString(binaryValue))
	} else {
		w.Elem("StringValue", stringValue)
	}
	w.Elem("DataType", dataType)
	w.Close("Value")
	w.Close("MessageAttribute")
}

// AppendEscaped escapes text the way SQS and SNS do: the five XML specials as
// entities, and CR as &#xD; so that it survives XML's line-end normalisation.
// What XML 1.0 cannot carry at all (invalid UTF-8, control characters other
// than tab, LF and CR, U+FFFE and U+FFFF) becomes U+FFFD: engines refuse
// such input, and this keeps every reply well-formed whatever slips by.
func AppendEscaped(dst []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		var esc string
		size := 1
		switch {
		case c == '&':
			esc = "&amp;"
		case c == '<':
			esc = "&lt;"
		case c == '>':
			esc = "&gt;"
		case c == '"':
			esc = "&quot;"
		case c == '\'':
			esc = "&apos;"
		case c == '\r':
			esc = "&#xD;"
		case c < 0x20 && c != '\t' && c != '\n':
			esc = "\uFFFD"
		case c >= utf8.RuneSelf:
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			if (r != utf8.RuneError || size > 1) && r != 0xFFFE && r != 0xFFFF {
				i += size
				continue
			}
			esc = "\uFFFD"
		default:
			i++
			continue
		}
		dst = append(dst, s[last:i]...)
		dst = append(dst, esc...)
		i += size
		last = i
	}
	return append(dst, s[last:]...)
}
