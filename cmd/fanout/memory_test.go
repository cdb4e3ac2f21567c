package main

import (
	"math"
	"runtime/debug"
	"testing"
)

func TestParseMemoryLimit(t *testing.T) {
	for in, want := range map[string]int64{
		"off": math.MaxInt64, "1073741824": 1 << 30, "4GiB": 4 << 30, "512MiB": 512 << 20,
		"64KiB": 64 << 10, "100B": 100, "1TiB": 1 << 40,
	} {
		if got, err := parseMemoryLimit(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1GiB", "4GB", "lots", "9999999TiB"} {
		if _, err := parseMemoryLimit(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestApplyMemoryLimit: the flag wins, then GOMEMLIMIT, then half the
// available memory.
func TestApplyMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	none := func(string) (string, bool) { return "", false }
	if got := applyMemoryLimit(memoryLimit(3<<30), none); got != 3<<30 {
		t.Errorf("flag: %d", got)
	}
	debug.SetMemoryLimit(5 << 30) // as the runtime would from GOMEMLIMIT
	env := func(k string) (string, bool) { return "5GiB", k == "GOMEMLIMIT" }
	if got := applyMemoryLimit(0, env); got != 5<<30 {
		t.Errorf("GOMEMLIMIT: %d", got)
	}
	if avail := availableMemory(); avail > 0 {
		if got := applyMemoryLimit(0, none); got != avail/2 {
			t.Errorf("default: %d, want %d", got, avail/2)
		}
	}
	var m memoryLimit
	if err := m.Set("off"); err != nil || m.String() != "off" || applyMemoryLimit(m, none) != math.MaxInt64 {
		t.Errorf("off: %v %s", err, m.String())
	}
}
