package fanout

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/internal/cors"
	"github.com/fanout/fanout/internal/hostcheck"
	"github.com/fanout/fanout/internal/id"
	"github.com/fanout/fanout/internal/tlsport"
)

// The HTTP server's limits. Reads are bounded so that a client that sends
// half a body, or opens connections and sends nothing, is cut off; writes
// outlast the longest call (a 20-second long poll, a 30-second profile).
const (
	defaultReadTimeout = 60 * time.Second
	defaultIdleTimeout = 120 * time.Second
	writeTimeout       = 2 * time.Minute
	readHeaderTimeout  = 10 * time.Second
	maxHeaderBytes     = 64 << 10
)

var accessDenied = awserr.Kind{Code: "AccessDenied", Status: 403, Fault: awserr.Sender}

// httpServer is the http.Server Start runs, with its limits.
func (s *Server) httpServer(h http.Handler) *http.Server {
	read, idle := s.opts.ReadTimeout, s.opts.IdleTimeout
	if read <= 0 {
		read = defaultReadTimeout
	}
	if idle <= 0 {
		idle = defaultIdleTimeout
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: min(readHeaderTimeout, read),
		ReadTimeout:       read,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idle,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// frontDoor wraps the handler Start serves on l: the Host check against
// DNS rebinding. On an address other computers can reach it also warns that
// anyone who reaches fanout can drive it.
func (s *Server) frontDoor(l net.Listener, next http.Handler) http.Handler {
	bind, _, _ := net.SplitHostPort(l.Addr().String())
	hosts := hostcheck.New(bind, s.opts.AllowedHosts)
	if !hostcheck.IsLoopback(bind) && len(s.opts.Credentials) == 0 {
		s.opts.Logger.Warn("fanout listens on an address other machines can reach and has no authentication: anyone who reaches it can read and change every queue and topic (use --credentials to require signed calls)", "addr", l.Addr().String())
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hosts.Allowed(r.Host) {
			refuse(w, r, accessDenied.New("fanout refuses Host %q: it answers only to %s, so that a web page cannot reach it by DNS rebinding; add names with --allowed-hosts.", clip(r.Host), hosts.Describe()))
			return
		}
		if r.URL.Path == certPath && s.tlsCertPEM != nil && r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "application/x-pem-file")
			_, _ = w.Write(s.tlsCertPEM)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// corsPolicy lets the pages of Options.CORSOrigins call fanout from a
// browser, and refuses requests from other pages.
func (s *Server) corsPolicy(next http.Handler) http.Handler {
	return cors.New(s.opts.CORSOrigins).Wrap(next, func(w http.ResponseWriter, r *http.Request, origin string) {
		refuse(w, r, accessDenied.New("fanout refuses requests from pages of origin %q: only the origins --cors-origins names may call it from a browser (default: pages served from localhost).", clip(origin)))
	})
}

// tlsListener wraps l to serve HTTPS as well as HTTP when Options ask for
// TLS: with TLSCertFile and TLSKeyFile, or a certificate made at start.
func (s *Server) tlsListener(l net.Listener) (net.Listener, error) {
	if !s.opts.TLS && s.opts.TLSCertFile == "" {
		return l, nil
	}
	var cert tls.Certificate
	var err error
	if s.opts.TLSCertFile != "" {
		if cert, err = tls.LoadX509KeyPair(s.opts.TLSCertFile, s.opts.TLSKeyFile); err != nil {
			return nil, fmt.Errorf("TLS certificate: %w", err)
		}
		if pemBytes, err := os.ReadFile(s.opts.TLSCertFile); err == nil {
			s.tlsCertPEM = pemBytes
		}
	} else {
		names := append([]string{}, s.opts.AllowedHosts...)
		if bind, _, _ := net.SplitHostPort(l.Addr().String()); bind != "" {
			names = append(names, bind)
		}
		if cert, s.tlsCertPEM, err = tlsport.SelfSigned(names); err != nil {
			return nil, fmt.Errorf("TLS certificate: %w", err)
		}
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}
	return tlsport.New(l, cfg, readHeaderTimeout), nil
}

// TLSCertPEM returns the certificate Start serves HTTPS with (PEM), or nil
// without TLS: clients trust a self-signed one by adding it as a CA.
func (s *Server) TLSCertPEM() []byte { return s.tlsCertPEM }

// certPath is where fanout hands out its certificate: the certificate is
// public, and a client needs it to trust a self-signed one.
const certPath = "/_fanout/tls/cert.pem"

// refuse answers a request fanout will not serve in the shape its client
// reads: AWS JSON for JSON calls, Query XML for other AWS calls, text for
// fanout's own endpoints.
func refuse(w http.ResponseWriter, r *http.Request, e *awserr.Error) {
	switch {
	case r.Header.Get("X-Amz-Target") != "":
		awswire.WriteJSONError(w, id.UUID(), coralJSON, e)
	case strings.HasPrefix(r.URL.Path, "/_fanout/"):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(e.StatusFor(true))
		_, _ = w.Write([]byte(e.Message + "\n"))
	default:
		awswire.WriteXMLError(w, id.UUID(), sqsXMLNS, e)
	}
}
