package main

import (
	"errors"
	"flag"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// --memory-limit is Go's soft memory limit (GOMEMLIMIT, debug.SetMemoryLimit)
// under another name: the collector works harder as fanout's memory nears
// it, and package sqs answers sends with RequestThrottled once the live heap
// passes three quarters of it, so a backlog nobody consumes never ends in
// an out-of-memory kill. Unset, it is GOMEMLIMIT if that is set, else half
// the memory fanout may use (its cgroup's limit, or the machine's).

// memoryLimit is the flag's value: bytes, or math.MaxInt64 for off; 0 is
// unset.
type memoryLimit int64

func (m *memoryLimit) String() string {
	switch {
	case *m == 0:
		return ""
	case *m == math.MaxInt64:
		return "off"
	}
	return strconv.FormatInt(int64(*m), 10) + "B"
}

// Set parses GOMEMLIMIT's syntax: a byte count with an optional B, KiB, MiB,
// GiB or TiB suffix, or "off".
func (m *memoryLimit) Set(s string) error {
	n, err := parseMemoryLimit(s)
	if err != nil {
		return err
	}
	*m = memoryLimit(n)
	return nil
}

var _ flag.Value = (*memoryLimit)(nil)

func parseMemoryLimit(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "off" {
		return math.MaxInt64, nil
	}
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = rest, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return 0, errors.New("want a size such as 4GiB, 512MiB or 1073741824, or off")
	}
	return n * mult, nil
}

// applyMemoryLimit sets the runtime's limit and returns it (MaxInt64: none).
func applyMemoryLimit(flagValue memoryLimit, lookup func(string) (string, bool)) int64 {
	switch {
	case flagValue != 0:
		debug.SetMemoryLimit(int64(flagValue))
	case envSet(lookup, "GOMEMLIMIT"):
		// The runtime read it at start.
	default:
		if avail := availableMemory(); avail > 0 {
			debug.SetMemoryLimit(avail / 2)
		}
	}
	return debug.SetMemoryLimit(-1)
}

func envSet(lookup func(string) (string, bool), name string) bool {
	v, ok := lookup(name)
	return ok && v != ""
}

// availableMemory is the cgroup's memory limit if it has one, else the
// machine's memory, in bytes; 0 if neither can be read.
func availableMemory() int64 {
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil { // cgroup v2
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			return min(n, machineMemory())
		}
	}
	return machineMemory()
}

func machineMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
