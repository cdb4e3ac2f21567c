package main

import (
	"fmt"
	"sort"
	"strings"
)

// lambdaFlag collects --lambda NAME=URL values.
type lambdaFlag map[string]string

func (l lambdaFlag) String() string {
	var parts []string
	for k, v := range l {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Set adds NAME=URL, or comma-separated pairs as FANOUT_LAMBDA holds them.
func (l lambdaFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		name, url, found := strings.Cut(v, "=")
		if !found || name == "" || url == "" {
			return fmt.Errorf("%q is not NAME=URL", v)
		}
		l[name] = url
	}
	return nil
}
