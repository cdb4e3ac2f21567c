package tlsport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// TestSniff: a silent client does not hold up the next one; TLS and plain
// connections come out of one listener; a silent one is closed after the
// timeout.
func TestSniff(t *testing.T) {
	t.Parallel()
	cert, certPEM, err := SelfSigned([]string{"fanout", "10.0.0.5"})
	if err != nil {
		t.Fatal(err)
	}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := New(inner, &tls.Config{Certificates: []tls.Certificate{cert}}, 200*time.Millisecond)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { // echo one line
				defer c.Close()
				buf := make([]byte, 5)
				if _, err := io.ReadFull(c, buf); err == nil {
					_, _ = c.Write(buf)
				}
			}()
		}
	}()
	silent, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	plain, err := net.Dial("tcp", inner.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = plain.Write([]byte("hello"))
	_ = plain.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(plain); err != nil || string(b) != "hello" {
		t.Fatalf("plain: %q %v", b, err)
	}

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	for _, name := range []string{"localhost", "sqs.localhost.localstack.cloud", "fanout"} {
		c, err := tls.Dial("tcp", inner.Addr().String(), &tls.Config{RootCAs: pool, ServerName: name})
		if err != nil {
			t.Fatalf("TLS as %s: %v", name, err)
		}
		_, _ = c.Write([]byte("howdy"))
		if b, err := io.ReadAll(c); err != nil || string(b) != "howdy" {
			t.Fatalf("TLS: %q %v", b, err)
		}
		c.Close()
	}
	if _, err := tls.Dial("tcp", inner.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "evil.example"}); err == nil {
		t.Fatal("the certificate is valid for any name")
	}

	_ = silent.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := silent.Read(make([]byte, 1)); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("a silent connection was kept open")
	}
}
