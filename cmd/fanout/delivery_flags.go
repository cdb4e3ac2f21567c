package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
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

func (l lambdaFlag) Set(v string) error {
	name, url, found := strings.Cut(v, "=")
	if !found || name == "" || url == "" {
		return fmt.Errorf("%q is not NAME=URL", v)
	}
	l[name] = url
	return nil
}

// addList adds comma-separated NAME=URL pairs (FANOUT_LAMBDA).
func (l lambdaFlag) addList(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			if err := l.Set(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// envDuration reads a FANOUT_* duration, or def.
func envDuration(name string, def time.Duration) time.Duration {
	d, err := time.ParseDuration(env(name, ""))
	if err != nil {
		return def
	}
	return d
}
