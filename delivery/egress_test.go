package delivery

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fanout/fanout/clock"
)

func egressDispatcher(self func() []string, allow []netip.Prefix) *Dispatcher {
	return New(Options{Clock: clock.NewManual(time.Unix(0, 0)), Signer: &fakeSigner{}, Self: self, EndpointAllow: allow,
		Links: Links{Base: func() string { return "http://localhost" }, CertFile: func() (string, error) { return "c.pem", nil }}})
}

func countingServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { n.Add(1) }))
	t.Cleanup(srv.Close)
	return srv, &n
}

// deliverOnce delivers one raw message to url and returns its record.
func deliverOnce(t *testing.T, d *Dispatcher, url string) Record {
	t.Helper()
	_ = d.Deliver(&Message{ID: "m", Body: "x", TopicArn: topicArn}, Subscriber{Arn: subArn, Protocol: "http", Endpoint: url, Raw: true})
	settle(t, d)
	return d.Deliveries("m")[0]
}

func TestDeliveriesNeverConnectToFanoutItself(t *testing.T) {
	t.Parallel()
	srv, hits := countingServer(t) // stands for fanout, listening on all interfaces
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	for _, self := range []string{srv.Listener.Addr().String(), "0.0.0.0:" + itoa(port), "localhost:" + itoa(port)} {
		d := egressDispatcher(func() []string { return []string{self} }, nil)
		for _, url := range []string{srv.URL + "/?Action=Publish", "http://localhost:" + itoa(port) + "/", "http://127.0.0.1:" + itoa(port)} {
			r := deliverOnce(t, d, url)
			if r.Status != StatusDropped || !strings.Contains(r.Reason, "would loop") || r.AttemptCount != 1 {
				t.Fatalf("self %s, %s: %+v", self, url, r)
			}
			if err := d.CheckEndpoint("http", url); err == nil || !strings.Contains(err.Error(), "itself") {
				t.Fatalf("CheckEndpoint(%s) with self %s: %v", url, self, err)
			}
			d.records = newRecords(10, 0)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("%d requests reached the server", hits.Load())
	}
	// Another port of the same host is someone else.
	d := egressDispatcher(func() []string { return []string{"127.0.0.1:1"} }, nil)
	if r := deliverOnce(t, d, srv.URL); r.Status != StatusDelivered || d.CheckEndpoint("http", srv.URL) != nil {
		t.Fatalf("%+v", r)
	}
}

func TestEndpointAllowIsCheckedOnTheResolvedAddress(t *testing.T) {
	t.Parallel()
	srv, hits := countingServer(t)
	port := itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	only10, err := ParseEndpointAllow("10.0.0.0/8, 192.168.1.7")
	if err != nil || len(only10) != 2 || only10[1].Bits() != 32 {
		t.Fatal(only10, err)
	}
	// By name too: localhost resolves to 127.0.0.1, which is outside.
	d := egressDispatcher(nil, only10)
	if r := deliverOnce(t, d, "http://localhost:"+port); r.Status != StatusDropped || !strings.Contains(r.Reason, "outside --endpoint-allow") {
		t.Fatalf("%+v", r)
	}
	if hits.Load() != 0 {
		t.Fatal("the request went out")
	}
	loop, _ := ParseEndpointAllow("127.0.0.0/8,::1")
	d = egressDispatcher(nil, loop)
	if r := deliverOnce(t, d, "http://localhost:"+port); r.Status != StatusDelivered || hits.Load() != 1 {
		t.Fatalf("%+v", r)
	}
	if _, err := ParseEndpointAllow("10.0.0.0/8,nope"); err == nil {
		t.Fatal("a bad entry is refused")
	}
}
