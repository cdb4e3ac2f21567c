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
	// Deep stacks come from heap spans: they would show in Sys.
	if grown := int64(after.Sys) - int64(before.Sys); grown > 16<<20 {
		t.Fatalf("the process grew by %d bytes", grown)
	}
}
