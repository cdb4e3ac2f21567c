package playground

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fanout/fanout/filter"
)

// Outcome words, shared by the text report and the page.
const (
	wordMatch   = "match"
	wordNoMatch = "no match"
	wordInvalid = "invalid policy"
)

// WriteText prints a Result for people: the outcome on the first line
// ("match", "no match" or "invalid policy"), then why. policy is the text
// that was evaluated, used to point at the error.
func WriteText(w io.Writer, res Result, policy string) error {
	var b strings.Builder
	switch {
	case !res.Valid:
		fmt.Fprintf(&b, "%s: %s\n", wordInvalid, res.Error)
		if res.ErrorOffset != nil {
			b.WriteString(pointAt(policy, *res.ErrorOffset))
		}
	default:
		writeExplanation(&b, res)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeExplanation(b *strings.Builder, res Result) {
	word := wordNoMatch
	if res.Matched {
		word = wordMatch
	}
	ex := res.Explanation
	if ex == nil {
		b.WriteString(word + "\n")
		return
	}
	fmt.Fprintf(b, "%s (%s scope)\n", word, ex.Scope)
	if ex.Reason != "" {
		fmt.Fprintf(b, "  %s\n", ex.Reason)
	}
	indent := "  "
	for i, br := range ex.Branches {
		if len(ex.Branches) > 1 {
			// A policy with $or reads as several alternatives: name them so
			// the reader can tell which one let the message through.
			fmt.Fprintf(b, "  alternative %d of %d ($or): %s\n", i+1, len(ex.Branches), outcome(br.Matched))
			indent = "    "
		}
		for _, k := range br.Keys {
			writeKey(b, indent, k)
		}
		if br.Reason != "" {
			fmt.Fprintf(b, "%s%s\n", indent, br.Reason)
		}
	}
}

func outcome(matched bool) string {
	if matched {
		return wordMatch
	}
	return wordNoMatch
}

// writeKey prints one key: a tick line saying what matched, or a cross
// line saying why not, followed by what was compared.
func writeKey(b *strings.Builder, indent string, k filter.KeyExplanation) {
	if k.Matched {
		subject := k.MatchedValue
		switch {
		case subject == "(every element)":
			subject = "every element"
		case subject == "" && len(k.Values) == 1:
			subject = k.Values[0] // a Binary attribute's size, say
		case subject == "" && k.Present:
			subject = "present"
		case subject == "":
			subject = "absent"
		}
		fmt.Fprintf(b, "%s✓ %s: %s matches %s\n", indent, k.Key, subject, k.Condition)
		return
	}
	fmt.Fprintf(b, "%s✗ %s: %s\n", indent, k.Key, k.Reason)
	if len(k.Values) > 0 {
		fmt.Fprintf(b, "%s    message:    %s\n", indent, strings.Join(k.Values, ", "))
	}
	fmt.Fprintf(b, "%s    conditions: %s\n", indent, strings.Join(k.Conditions, ", "))
}

// pointAt shows the line of src holding byte offset off, with a caret
// under it, clipped around the spot when the line is long.
func pointAt(src string, off int) string {
	off = min(max(off, 0), len(src))
	start := strings.LastIndexByte(src[:off], '\n') + 1
	end := len(src)
	if i := strings.IndexByte(src[off:], '\n'); i >= 0 {
		end = off + i
	}
	lineNo := strings.Count(src[:start], "\n") + 1
	col := utf8.RuneCountInString(src[start:off]) + 1
	const window = 60 // characters kept on each side of the spot
	left, right := src[start:off], src[off:end]
	if utf8.RuneCountInString(left) > window {
		r := []rune(left)
		left = "…" + string(r[len(r)-window:])
	}
	if utf8.RuneCountInString(right) > window {
		right = string([]rune(right)[:window]) + "…"
	}
	// Tabs stay tabs under the caret so that it lines up as the line does.
	var pad strings.Builder
	for _, r := range left {
		if r == '\t' {
			pad.WriteByte('\t')
		} else {
			pad.WriteByte(' ')
		}
	}
	return fmt.Sprintf("  at line %d, column %d:\n    %s%s\n    %s^\n", lineNo, col, left, right, pad.String())
}
