// Package jsondepth bounds how deeply a JSON text nests, in one linear pass
// that keeps no stack: it runs before any recursive parser (gjson's
// validator, encoding/json) sees text from a client, so that a body of a
// million '[' costs one scan instead of a million stack frames.
package jsondepth

// Max is the deepest nesting fanout accepts anywhere: Jackson's default
// (StreamReadConstraints), which AWS's Java front ends share. No AWS request
// shape comes close; the bound exists to keep recursive parsers' stacks small.
const Max = 1000

// Within reports whether text never nests arrays and objects deeper than
// limit. It does not validate the JSON: brackets inside strings are skipped,
// unbalanced brackets are left to the parser that follows.
func Within[T ~string | ~[]byte](text T, limit int) bool {
	depth := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '[', '{':
			depth++
			if depth > limit {
				return false
			}
		case ']', '}':
			// A stray closer cannot buy depth for later openers.
			depth = max(depth-1, 0)
		case '"':
			// Skip the string: an escaped quote does not end it.
			for i++; i < len(text); i++ {
				if c := text[i]; c == '\\' {
					i++
				} else if c == '"' {
					break
				}
			}
		}
	}
	return true
}
