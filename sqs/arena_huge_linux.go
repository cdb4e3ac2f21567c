package sqs

import (
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Big regions (arena.go) come from blocks of 2 MiB, aligned to 2 MiB and
// advised for transparent huge pages, which the kernel backs with one huge
// page each: on a 2-core VM, faulting memory in 4 KiB pages cost about
// 1.5 µs a KiB even with MAP_POPULATE and pages the process had just freed,
// and a huge page the kernel had free about 0.1 µs a KiB (a program copying
// 1 KiB at a time into 256 to 512 MiB mappings). Queued bytes fill their
// regions, so the huge pages hold nothing idle. Where the kernel will not
// give huge pages (transparent_hugepage set to never), blocks are mapped
// in small pages as before.

// hugeBlock is the size of a huge page on the kernels fanout uses them on.
const hugeBlock = 2 << 20

// hugePages is set when the kernel gives huge pages to memory advised so.
var hugePages = kernelHugePages()

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
