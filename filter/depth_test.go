package filter

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// A body or String.Array value nested deeper than Jackson allows is not JSON
// to SNS, so it matches no policy; the depth is found in one flat pass, so
// a 256 KiB body of '[' costs no deep recursion (it used to cost gjson's
// validator about 50 MB of stack).
func TestDeepJSONIsRefusedCheaply(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(16 << 20))
	nest := func(depth int) string {
		return `{"a":` + strings.Repeat("[", depth-1) + `"x"` + strings.Repeat("]", depth-1) + `}`
	}
	body := MustCompile(`{"a":["x"]}`, ScopeBody)
	if !body.Match(Message{Body: nest(maxNestingDepth)}) {
		t.Fatal("a body at the depth limit should match")
	}
	if body.Match(Message{Body: nest(maxNestingDepth + 1)}) {
		t.Fatal("a body past the depth limit matched")
	}
	deep := `{"a":` + strings.Repeat("[", 256<<10) + `}`
	arr := MustCompile(`{"a":["x"]}`, ScopeAttributes)
	attrs := map[string]Attribute{"a": {DataType: "String.Array", StringValue: strings.Repeat("[", 256<<10)}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 4 {
		if body.Match(Message{Body: deep}) || arr.Match(Message{Attributes: attrs}) {
			t.Fatal("a deep text matched")
		}
		_ = body.Explain(Message{Body: deep})
		_ = arr.Explain(Message{Attributes: attrs})
	}
	runtime.ReadMemStats(&after)
	// A recursive walk shows in the stacks, a quadratic one in the bytes
	// allocated. The process's Sys is not used: the heap maps 64 MiB arenas,
	// so it jumps by that whenever the collector runs late.
	stack := int64(after.StackSys) - int64(before.StackSys)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("stacks grew %d bytes, %d bytes allocated", stack, alloc)
	if stack > 1<<20 || alloc > 64<<20 {
		t.Fatalf("the stacks grew by %d bytes and %d bytes were allocated", stack, alloc)
	}
}
