// Package tlsport serves HTTP and HTTPS on one port: each connection's first
// byte says which (a TLS handshake starts with 0x16, an HTTP request with a
// letter). One port means a client switches to HTTPS by changing only the
// scheme of its endpoint, as with LocalStack's 4566, and a queue URL of
// either scheme keeps working.
package tlsport

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"sync"
	"time"
)

// handshake is the first byte of a TLS record carrying a handshake.
const handshake = 0x16

// Listener hands out plain connections and, for those that start a TLS
// handshake, *tls.Conn (so that http.Server sets Request.TLS).
type Listener struct {
	net.Listener
	config  *tls.Config
	timeout time.Duration
	conns   chan net.Conn
	done    chan struct{}
	once    sync.Once
}

// New serves inner's connections, TLS ones with config. A connection that
// sends nothing within timeout is closed.
func New(inner net.Listener, config *tls.Config, timeout time.Duration) *Listener {
	l := &Listener{Listener: inner, config: config, timeout: timeout, conns: make(chan net.Conn), done: make(chan struct{})}
	go l.acceptLoop()
	return l
}

func (l *Listener) acceptLoop() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			l.Close() // the inner listener is closed or broken
			return
		}
		go l.sniff(c) // a slow client must not hold up the others' accepts
	}
}

// sniff reads the first byte and hands the connection on.
func (l *Listener) sniff(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(l.timeout))
	br := bufio.NewReaderSize(c, 1024)
	first, err := br.Peek(1)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil {
		c.Close()
		return
	}
	var out net.Conn = &peeked{Conn: c, r: br}
	if first[0] == handshake {
		out = tls.Server(out, l.config)
	}
	select {
	case l.conns <- out:
	case <-l.done:
		out.Close()
	}
}

// Accept returns the next sniffed connection.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting.
func (l *Listener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.done)
		err = l.Listener.Close()
	})
	return err
}

// peeked is a connection whose first bytes were read into r.
type peeked struct {
	net.Conn
	r *bufio.Reader
}

func (p *peeked) Read(b []byte) (int, error) { return p.r.Read(b) }

// LoopbackNames are the names a self-signed certificate is made for, with
// 127.0.0.1 and ::1: what the Host check accepts on a loopback address.
var LoopbackNames = []string{"localhost", "*.localhost", "localhost.localstack.cloud", "*.localhost.localstack.cloud"}

// SelfSigned makes a certificate for names (DNS names or IP addresses) and
// the loopback names and addresses, valid for a year, that is its own CA:
// a client trusts it by adding its PEM as a CA bundle.
func SelfSigned(names []string) (cert tls.Certificate, certPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"fanout"}, CommonName: "fanout self-signed"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		DNSNames:              append([]string{}, LoopbackNames...),
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if n != "" && n != "*" {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	cert, err = tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	return cert, certPEM, err
}
