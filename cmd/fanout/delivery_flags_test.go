package main

import (
	"testing"

	"github.com/fanout/fanout"
)

func TestDeliveryFlags(t *testing.T) {
	t.Parallel()
	fs, c := serveFlags()
	env := map[string]string{"FANOUT_ENDPOINT_ALLOW": "10.0.0.0/8,127.0.0.1"}
	if err := applyEnv(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--record-bytes", "8MiB", "--delivery-backlog", "50"}); err != nil {
		t.Fatal(err)
	}
	var o fanout.Options
	if err := c.deliv.apply(&o); err != nil {
		t.Fatal(err)
	}
	if o.RecordBytes != 8<<20 || o.DeliveryBacklog != 50 || len(o.EndpointAllow) != 2 {
		t.Fatalf("%+v", o)
	}
	for _, bad := range [][]string{{"--record-bytes", "lots"}, {"--record-bytes", "0"}} {
		fs, _ := serveFlags()
		if err := fs.Parse(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	fs, c = serveFlags()
	_ = fs.Parse([]string{"--endpoint-allow", "10.0.0.0/8,nope"})
	if err := c.deliv.apply(&o); err == nil {
		t.Error("a bad --endpoint-allow is refused")
	}
}
