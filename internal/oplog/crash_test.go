package oplog

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/fanout/fanout/internal/persist"
)

// The tests below run this test binary again as a child that opens a data
// dir and writes to it, and kill it with SIGKILL: a real process crash, with
// the kernel (not our Close) releasing the lock and the page cache keeping
// what was written.
const childDirEnv = "FANOUT_OPLOG_CHILD_DIR"

// TestMain lets the binary act as that child.
func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		os.Exit(child(dir))
	}
	os.Exit(m.Run())
}

// child opens dir and, from 8 goroutines, commits batches of a put and a
// delete of the put before it, printing each acknowledged batch's keys, until
// it is killed.
func child(dir string) int {
	l, _, err := Open(dir, Options{}, func(k, v []byte) error { return nil })
	if err != nil {
		fmt.Println("open:", err)
		return 1
	}
	fmt.Println("ready")
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				k := fmt.Sprintf("%d-%d/w%d/%d", os.Getpid(), w, w, i)
				b := []persist.Record{kv(k, strings.Repeat("v", 100+i%200))}
				var gone string
				if i > 0 {
					gone = fmt.Sprintf("%d-%d/w%d/%d", os.Getpid(), w, w, i-1)
					b = append(b, del(gone))
				}
				if err := l.Commit(b); err != nil {
					fmt.Println("commit:", err)
					os.Exit(1)
				}
				mu.Lock()
				fmt.Fprintf(out, "ack %s %s\n", k, gone)
				out.Flush()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return 0
}

func startChild(t *testing.T, dir string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child did not start: %q", sc.Text())
	}
	return cmd, sc
}

// The tests that start a child are not parallel: between fork and exec a
// child holds a copy of every descriptor of ours, flocked LOCK files
// included, which would make another test's Open find its dir locked.

func TestLockHeldByAnotherProcessIsRefusedAndFreedByItsDeath(t *testing.T) {
	dir := t.TempDir()
	cmd, _ := startChild(t, dir)
	_, _, err := Open(dir, Options{}, func(k, v []byte) error { return nil })
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(cmd.Process.Pid)) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("open while another process holds the dir: %v", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	l, _, _ := openT(t, dir, Options{}) // no stale lock after kill -9
	l.Close()
}

// TestKillNineKeepsEveryAcknowledgedBatch kills a writing child at random
// moments and checks, each time, that every batch it acknowledged is there
// (its put present unless a later acknowledged batch deleted it) and that
// nothing it acknowledged as deleted came back.
func TestKillNineKeepsEveryAcknowledgedBatch(t *testing.T) {
	dir := t.TempDir()
	present := map[string]bool{} // acknowledged and not deleted
	deleted := map[string]bool{}
	cycles := 5 // FANOUT_OPLOG_CRASH_CYCLES=200 for the long run
	if n, err := strconv.Atoi(os.Getenv("FANOUT_OPLOG_CRASH_CYCLES")); err == nil {
		cycles = n
	}
	for cycle := range cycles {
		cmd, sc := startChild(t, dir)
		acks := make(chan string, 1024)
		go func() {
			defer close(acks)
			for sc.Scan() {
				acks <- sc.Text()
			}
		}()
		// Let it write for a while, measured in acknowledgements, not time.
		want := 50 + cycle*97%1500
		n := 0
		for line := range acks {
			f := strings.Fields(line)
			if len(f) < 2 || f[0] != "ack" {
				t.Fatalf("child: %s", line)
			}
			present[f[1]] = true
			if len(f) == 3 {
				delete(present, f[2])
				deleted[f[2]] = true
			}
			if n++; n == want {
				cmd.Process.Signal(syscall.SIGKILL)
			}
		}
		cmd.Wait()
		got, rec := reopen(t, dir)
		for k := range present {
			if _, ok := got[k]; !ok && !superseded(got, k) {
				t.Fatalf("cycle %d: acknowledged %s is gone (%v)", cycle, k, rec)
			}
		}
		for k := range deleted {
			if _, ok := got[k]; ok {
				t.Fatalf("cycle %d: %s came back after an acknowledged delete", cycle, k)
			}
		}
		// Unacknowledged batches may have landed too: they are the state of
		// a later moment, which is allowed; carry them into the model.
		present = keysOf(got)
	}
}

// superseded reports whether a later batch of k's writer (unacknowledged
// when the child died, but on disk) deleted k: then its writer's next key
// is present.
func superseded(got model, k string) bool {
	prefix, idx, _ := strings.Cut(k, "/w")
	w, i, _ := strings.Cut(idx, "/")
	n, _ := strconv.Atoi(i)
	_, ok := got[fmt.Sprintf("%s/w%s/%d", prefix, w, n+1)]
	return ok
}

func keysOf(m model) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}
