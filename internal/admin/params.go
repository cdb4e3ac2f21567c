package admin

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// intParam reads a non-negative integer query parameter, def when absent.
func intParam(q url.Values, name string, def, most int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > most {
		return 0, fmt.Errorf("%s: %q is not a whole number from 0 to %d", name, s, most)
	}
	return n, nil
}

// boolParam reads true/false (any case); def when absent.
func boolParam(q url.Values, name string, def bool) (bool, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(strings.ToLower(s))
	if err != nil {
		return false, fmt.Errorf("%s: %q is neither true nor false", name, s)
	}
	return b, nil
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
