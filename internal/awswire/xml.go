package awswire

import "strconv"

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

// AppendEscaped escapes text the way SQS and SNS do: the five XML specials as
// entities, and CR as &#xD; so that it survives XML's line-end normalisation.
func AppendEscaped(dst []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&quot;"
		case '\'':
			esc = "&apos;"
		case '\r':
			esc = "&#xD;"
		default:
			continue
		}
		dst = append(dst, s[last:i]...)
		dst = append(dst, esc...)
		last = i + 1
	}
	return append(dst, s[last:]...)
}
