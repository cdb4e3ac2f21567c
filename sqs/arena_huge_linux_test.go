package sqs

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// Huge pages are opt-in (FANOUT_HUGE_PAGES=1) and read once, as the pool's
// classes are cut for them: the memory tests run again in a child process
// that asks for them, so that path stays tested where the kernel has them.
func TestMemoryWithHugePagesAsked(t *testing.T) {
	if hugePagesAsked() {
		t.Skip("this process is the child")
	}
	if !kernelHugePages() {
		t.Skip("the kernel gives no transparent huge pages here")
	}
	cmd := exec.Command(os.Args[0], "-test.v", "-test.count=1",
		"-test.run", "^(TestPool|TestBigChunksComeFromHugePages|TestDroppedQueue|TestConcurrentTakes|TestRestoreOfABigQueue|TestSpareRegions|TestRegionsAhead|TestMemory)")
	cmd.Env = append(os.Environ(), "FANOUT_HUGE_PAGES=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestBigChunksComeFromHugePages")) {
		t.Fatalf("with FANOUT_HUGE_PAGES=1: %v\n%s", err, out)
	}
}
