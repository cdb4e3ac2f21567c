package fanout_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fanout/fanout"
)

// rawHTTP writes request on a new connection to s and returns the status
// line and the whole reply (the request asks for the connection to close).
func rawHTTP(t *testing.T, addr, request string) (string, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	status, _, _ := strings.Cut(string(b), "\r\n")
	return status, string(b)
}

// TestHostCheck: on a loopback bind only loopback names are answered; a
// DNS-rebinding page's Host is refused whatever it asks for.
func TestHostCheck(t *testing.T) {
	t.Parallel()
	s := startServer(t, fanout.Options{})
	for _, host := range []string{"localhost:1", "sqs.localhost", "127.0.0.1", "[::1]:4566", "localhost.localstack.cloud:4566", "sqs.us-east-1.localhost.localstack.cloud"} {
		status, body := rawHTTP(t, s.Addr(), "GET /_fanout/health HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
		if status != "HTTP/1.1 200 OK" {
			t.Errorf("Host %s: %s", host, body)
		}
	}
	status, body := rawHTTP(t, s.Addr(), "GET /_fanout/sqs/queues HTTP/1.1\r\nHost: rebind.evil.example:4566\r\nConnection: close\r\n\r\n")
	if status != "HTTP/1.1 403 Forbidden" || !strings.Contains(body, `fanout refuses Host "rebind.evil.example:4566"`) || !strings.Contains(body, "--allowed-hosts") {
		t.Errorf("rebinding Host on /_fanout/: %s", body)
	}
	// An AWS call is refused in its protocol's shape, so an SDK shows why.
	status, body = rawHTTP(t, s.Addr(), "POST / HTTP/1.1\r\nHost: evil.example\r\nX-Amz-Target: AmazonSQS.ListQueues\r\nContent-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
	if status != "HTTP/1.1 403 Forbidden" || !strings.Contains(body, `"__type":"com.amazon.coral.service#AccessDenied"`) || !strings.Contains(body, "x-amzn-query-error: AccessDenied;Sender") && !strings.Contains(body, "X-Amzn-Query-Error: AccessDenied;Sender") {
		t.Errorf("rebinding Host on a JSON call: %s", body)
	}
	status, body = rawHTTP(t, s.Addr(), "POST / HTTP/1.1\r\nHost: evil.example\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 17\r\nConnection: close\r\n\r\nAction=ListQueues")
	if status != "HTTP/1.1 403 Forbidden" || !strings.Contains(body, "<Code>AccessDenied</Code>") {
		t.Errorf("rebinding Host on a Query call: %s", body)
	}
}

// TestAllowedHostsAndWarning: on an address other machines can reach,
// fanout warns at start, answers IP addresses and --allowed-hosts names,
// and still refuses other names.
func TestAllowedHostsAndWarning(t *testing.T) {
	t.Parallel()
	logs := &syncWriter{}
	s := startServer(t, fanout.Options{Addr: "0.0.0.0:0", AllowedHosts: []string{"fanout", "*.ci.example"},
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	_, port, _ := net.SplitHostPort(s.Addr())
	addr := "127.0.0.1:" + port
	if !strings.Contains(logs.String(), "no authentication") {
		t.Errorf("no warning: %s", logs.String())
	}
	for host, want := range map[string]string{"fanout:4566": "200", "q.ci.example": "200", "10.1.2.3:4566": "200", "localhost": "200", "other.example": "403"} {
		status, body := rawHTTP(t, addr, "GET /_fanout/health HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
		if !strings.HasPrefix(status, "HTTP/1.1 "+want) {
			t.Errorf("Host %s: want %s, got %s", host, want, body)
		}
	}
	// A loopback bind does not warn.
	quiet := &syncWriter{}
	startServer(t, fanout.Options{Logger: slog.New(slog.NewTextHandler(quiet, nil))})
	if strings.Contains(quiet.String(), "no authentication") {
		t.Errorf("loopback bind warned: %s", quiet.String())
	}
}

// syncWriter lets the test read what the server's goroutines logged.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestHalfSentBodyAndIdleConnectionsAreReaped: a client that sends half a
// body, or keeps a connection open without a request, is cut off after
// ReadTimeout and IdleTimeout; a long poll longer than both still answers.
func TestHalfSentBodyAndIdleConnectionsAreReaped(t *testing.T) {
	t.Parallel()
	s := startServer(t, fanout.Options{ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})

	// Half a body: the headers promise 100 bytes, 10 arrive.
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "POST / HTTP/1.1\r\nHost: localhost\r\nX-Amz-Target: AmazonSQS.ListQueues\r\nContent-Length: 100\r\n\r\n{\"QueueNam")
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a bound on the test, far above the timeout
	start := time.Now()
	_, err = io.ReadAll(c)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("half-sent body: connection still open after %v", time.Since(start))
	}

	// An idle keep-alive connection, after one answered request.
	c2, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	_, _ = io.WriteString(c2, "GET /_fanout/health HTTP/1.1\r\nHost: localhost\r\n\r\n")
	_ = c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c2)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("health: %v %v", resp, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle connection: want EOF from the server, got %v", err)
	}

	// A long poll outlasts both timeouts (these are the HTTP server's own,
	// on the wall clock, so this poll waits a real second): only reading the
	// request is bounded, and writes get far longer than a 20-second poll.
	if _, err := s.SQS().CreateQueue("poll", nil, nil); err != nil {
		t.Fatal(err)
	}
	body := `{"QueueUrl":"` + s.URL() + `/000000000000/poll","WaitTimeSeconds":1}`
	req, _ := http.NewRequest("POST", s.URL()+"/", strings.NewReader(body))
	req.Header.Set("X-Amz-Target", "AmazonSQS.ReceiveMessage")
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	start = time.Now()
	code, reply, _ := raw(t, req)
	if code != 200 || time.Since(start) < time.Second {
		t.Fatalf("long poll: %d after %v: %s", code, time.Since(start), reply)
	}
}
