package jsondepth

// maxValidDepth is the deepest limit Valid takes: its stack of open
// containers is a fixed bit set, so that validating allocates nothing.
const maxValidDepth = 1024

// Valid reports whether text is one JSON value (RFC 8259; like gjson's
// validator, it does not check UTF-8) whose arrays and objects nest at most
// limit deep (at most 1024). It is Within and gjson.Valid in one flat pass
// with no recursion: one scan of a request body instead of two.
func Valid[T ~string | ~[]byte](text T, limit int) bool {
	limit = min(limit, maxValidDepth)
	var objects [maxValidDepth / 64]uint64 // bit d: level d+1 is an object
	depth := 0
	n := len(text)
	i := skipSpace(text, 0)
	for {
		// A value starts at i.
		if i >= n {
			return false
		}
		switch c := text[i]; {
		case c == '{' || c == '[':
			if depth == limit {
				return false
			}
			word, bit := depth/64, uint64(1)<<(depth%64)
			if c == '{' {
				objects[word] |= bit
			} else {
				objects[word] &^= bit
			}
			depth++
			i = skipSpace(text, i+1)
			if i < n && (c == '{' && text[i] == '}' || c == '[' && text[i] == ']') {
				depth--
				i++
				break // an empty container is a whole value
			}
			if c == '{' {
				if i = member(text, i); i < 0 {
					return false
				}
			}
			continue
		case c == '"':
			if i = stringEnd(text, i+1); i < 0 {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = numberEnd(text, i); i < 0 {
				return false
			}
		case c == 't':
			if i = literalEnd(text, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = literalEnd(text, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = literalEnd(text, i, "null"); i < 0 {
				return false
			}
		default:
			return false
		}
		// A value ended at i: close containers until one takes another value.
		for {
			i = skipSpace(text, i)
			if depth == 0 {
				return i == n
			}
			if i >= n {
				return false
			}
			object := objects[(depth-1)/64]&(uint64(1)<<((depth-1)%64)) != 0
			c := text[i]
			if c == '}' && object || c == ']' && !object {
				depth--
				i++
				continue
			}
			if c != ',' {
				return false
			}
			i = skipSpace(text, i+1)
			if object {
				if i = member(text, i); i < 0 {
					return false
				}
			}
			break
		}
	}
}

func skipSpace[T ~string | ~[]byte](text T, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	return i
}

// member reads `"key" :` at i and returns where its value starts, or -1.
func member[T ~string | ~[]byte](text T, i int) int {
	if i >= len(text) || text[i] != '"' {
		return -1
	}
	if i = stringEnd(text, i+1); i < 0 {
		return -1
	}
	i = skipSpace(text, i)
	if i >= len(text) || text[i] != ':' {
		return -1
	}
	return skipSpace(text, i+1)
}

// stringEnd returns the index after the closing quote of the string whose
// content starts at i, or -1.
func stringEnd[T ~string | ~[]byte](text T, i int) int {
	for ; i < len(text); i++ {
		for i < len(text) && text[i] >= ' ' && text[i] != '"' && text[i] != '\\' {
			i++ // the plain run of a string, in a tight loop
		}
		if i == len(text) {
			return -1
		}
		switch c := text[i]; {
		case c == '"':
			return i + 1
		case c < ' ':
			return -1
		case c == '\\':
			i++
			if i >= len(text) {
				return -1
			}
			switch text[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(text) {
					return -1
				}
				for j := i + 1; j <= i+4; j++ {
					if h := text[j]; !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// numberEnd returns the index after the number starting at i, or -1.
func numberEnd[T ~string | ~[]byte](text T, i int) int {
	n := len(text)
	if text[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < n && text[i] >= '0' && text[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < n && text[i] == '0':
		i++
	case !digits():
		return -1
	}
	if i < n && text[i] == '.' {
		i++
		if !digits() {
			return -1
		}
	}
	if i < n && (text[i] == 'e' || text[i] == 'E') {
		i++
		if i < n && (text[i] == '+' || text[i] == '-') {
			i++
		}
		if !digits() {
			return -1
		}
	}
	return i
}

// literalEnd returns the index after word at i, or -1.
func literalEnd[T ~string | ~[]byte](text T, i int, word string) int {
	if len(text)-i < len(word) {
		return -1
	}
	for j := range len(word) {
		if text[i+j] != word[j] {
			return -1
		}
	}
	return i + len(word)
}
