package sqs

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Big regions (arena.go) may come from blocks of 2 MiB, aligned to 2 MiB
// and advised for transparent huge pages, which the kernel backs with one
// huge page each. They are opt-in (FANOUT_HUGE_PAGES=1): where the kernel
// has huge pages free they are cheaper than small ones (about 0.1 µs a KiB
// to fault in, against 1.5 µs, in a program copying 1 KiB at a time into
// 256 MiB mappings), but where a VM's host must back every fresh page
// again, as on the 2-core Firecracker VM fanout's figures come from, they
// cost more: a plain-HTTP SendMessageBatch of ten 1 KiB bodies took 108 µs
// of fanout's CPU with them and 73 µs without (README, Performance).
// Queued bytes fill their regions, so the huge pages hold nothing idle.

// hugeBlock is the size of a huge page on the kernels fanout uses them on.
const hugeBlock = 2 << 20

// hugePages is set when FANOUT_HUGE_PAGES asks for huge pages and the
// kernel gives them to memory advised so. It is read once: the pool's
// classes (arena_pool.go) are cut for it.
var hugePages = hugePagesAsked() && kernelHugePages()

func hugePagesAsked() bool {
	on, err := strconv.ParseBool(os.Getenv("FANOUT_HUGE_PAGES"))
	return err == nil && on
}

func kernelHugePages() bool {
	enabled, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return false
	}
	if s := string(enabled); !strings.Contains(s, "[always]") && !strings.Contains(s, "[madvise]") {
		return false
	}
	size, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
	return err == nil && strings.TrimSpace(string(size)) == "2097152"
}

// mapHugeBlock maps n bytes, a multiple of hugeBlock, aligned to hugeBlock
// and faulted in (in huge pages where the kernel has them), or returns nil.
// It is faulted in here, as MAP_POPULATE does for small pages, so that the
// first write into it does not fault under a queue's lock.
func mapHugeBlock(n int) []byte {
	whole := mapAnon(n+hugeBlock, 0) // room to align within
	if whole == nil {
		return nil
	}
	head := int(-uintptr(unsafe.Pointer(unsafe.SliceData(whole))) & (hugeBlock - 1))
	if head > 0 {
		unmapRegion(whole[:head])
	}
	unmapRegion(whole[head+n:]) // hugeBlock-head bytes, never empty
	b := whole[head : head+n : head+n]
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	if unix.Madvise(b, unix.MADV_POPULATE_WRITE) != nil { // before Linux 5.14
		for i := 0; i < len(b); i += os.Getpagesize() {
			b[i] = 0
		}
	}
	return b
}
