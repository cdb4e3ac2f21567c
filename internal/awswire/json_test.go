package awswire

import (
	"encoding/json"
	"testing"
)

func TestJSONWriterRoundTrips(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", "q\"uote\\back", "ctl\x00\x01\x1f", "nl\n\r\t", "héllo \u2028 😀 <&>"} {
		var o JSONObject
		o.Open()
		o.String("s", s)
		o.Int("n", -42)
		o.OpenArray("a")
		o.Item()
		o.Open()
		o.Bool("b", true)
		o.Close()
		o.Item()
		o.Open()
		o.Close()
		o.CloseArray()
		o.Close()
		var got struct {
			S string
			N int
			A []map[string]bool
		}
		if err := json.Unmarshal(o.Buf, &got); err != nil {
			t.Fatalf("%s: %v", o.Buf, err)
		}
		if got.S != s || got.N != -42 || len(got.A) != 2 || !got.A[0]["b"] {
			t.Fatalf("%q -> %s -> %+v", s, o.Buf, got)
		}
	}
}
