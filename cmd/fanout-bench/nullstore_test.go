package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
)

// The store floor keeps every byte it is given, from many senders at once,
// in regions of its own size, and gives them all back on reset.
func TestStoreFloorKeepsEverything(t *testing.T) {
	s := &storeFloor{}
	t.Cleanup(s.reset)
	const senders, each = 8, 400
	body := bytes.Repeat([]byte("b"), 1000)
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				s.keep(fmt.Appendf(nil, "<msg-%06d>", g*each+i), body)
			}
		}()
	}
	wg.Wait()
	want := senders * each * (len("<msg-000000>") + len(body))
	if got := s.kept(); got < want || got > want+len(s.regions)*(len(body)+12) {
		t.Fatalf("kept %d bytes of %d, in %d regions", got, want, len(s.regions))
	}
	seen := map[int]int{}
	for _, r := range s.regions {
		if len(r) != floorRegion {
			t.Fatalf("a region of %d bytes", len(r))
		}
		for rest := r; ; {
			i := bytes.Index(rest, []byte("<msg-"))
			if i < 0 {
				break
			}
			n, err := strconv.Atoi(string(rest[i+5 : i+11]))
			if err != nil {
				t.Fatal(err)
			}
			seen[n]++
			rest = rest[i+12:]
		}
	}
	for n := range senders * each {
		if seen[n] != 1 {
			t.Fatalf("message %d kept %d times", n, seen[n])
		}
	}
	s.reset()
	if s.kept() != 0 || s.regions != nil {
		t.Fatalf("after reset: %d bytes kept, %d regions", s.kept(), len(s.regions))
	}
}

// Behind the null server's handler, with --serve-store, the floor keeps
// each sent body with its reply entry and lets go of them all when the
// tool deletes its queue; the replies are the null server's own.
func TestNullStoreKeepsSends(t *testing.T) {
	floor = &storeFloor{}
	t.Cleanup(func() { floor.reset(); floor = nil })
	srv := newNullServer(t)
	ctx := context.Background()
	c := &rawClient{hc: newHTTPClient(2), endpoint: srv.URL}
	q := srv.URL + "/000000000000/q-send-batch-100B"
	if err := c.sendMessage(ctx, q, entry{body: "single"}); err != nil {
		t.Fatal(err)
	}
	if err := c.sendMessageBatch(ctx, q, batchOf(10, 100)); err != nil {
		t.Fatal(err)
	}
	kept := floor.kept()
	if len(floor.regions) != 1 || kept < len("single")+10*100 {
		t.Fatalf("kept %d bytes in %d regions", kept, len(floor.regions))
	}
	used := floor.regions[0][:kept]
	if !bytes.Contains(used, []byte(`"MD5OfMessageBody":"`)) || !bytes.Contains(used, []byte("single")) {
		t.Fatalf("what is kept lacks the send: %q", used)
	}
	if err := c.deleteQueue(ctx, q); err != nil {
		t.Fatal(err)
	}
	if floor.kept() != 0 || floor.regions != nil {
		t.Fatalf("after DeleteQueue: %d bytes kept", floor.kept())
	}
}
