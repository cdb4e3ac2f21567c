package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// On a VM whose host takes back the memory its guest frees (a balloon's
// free-page reporting), a page the guest has not used lately costs several
// times more kernel time on its first use: on the 2-core VM the README's
// figures come from, mapping fresh memory costs about 0.5 ms a MiB for the
// first 2 GiB and 2 to 2.7 ms a MiB past it, for any program. A server
// that stores what it is sent then pays for the machine's reason, not its
// own, and a fill that stores gigabytes slows with its depth. --prefault
// touches that much memory in this tool and gives it back just before each
// run's warm-up, so the pages the server takes next are ones the host
// already backs; each run's note of the server's kernel time, and the
// fill's per window, show which case a run was in.

const prefaultBlock = 64 << 20

// prefault touches n bytes of fresh memory, then returns them to the
// kernel.
func prefault(n int64) {
	touch(n)
	debug.FreeOSMemory()
}

// touch writes a byte of every page of n bytes it holds all at once.
func touch(n int64) {
	held := make([][]byte, 0, n/prefaultBlock+1)
	for got := int64(0); got < n; got += prefaultBlock {
		b := make([]byte, prefaultBlock)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		held = append(held, b)
	}
	runtime.KeepAlive(held)
}

// checkPrefault refuses a --prefault of more than three quarters of the
// memory the kernel says is available (when it says).
func checkPrefault(gib int) error {
	if gib < 0 || gib > 1024 {
		return fmt.Errorf("--prefault must be in [0, 1024] GiB")
	}
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil || gib == 0 {
		return nil
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil && int64(gib)<<20 > kib*3/4 {
				return fmt.Errorf("--prefault %d GiB is more than three quarters of the %d MiB available", gib, kib>>10)
			}
		}
	}
	return nil
}
