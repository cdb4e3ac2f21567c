// Package hostcheck guards against DNS rebinding: a page on evil.example
// whose name is re-pointed at 127.0.0.1 talks to fanout as a same-origin
// page, and can read every answer. The browser still sends Host:
// evil.example, so fanout answers only to host names it knows.
package hostcheck

import (
	"net"
	"strings"
	"sync/atomic"
)

// loopbackNames are the names that resolve to loopback wherever fanout
// runs: localhost and its subdomains (RFC 6761), and the LocalStack names
// users already point their clients at (public DNS resolves them to 127.0.0.1).
var loopbackNames = []string{"localhost", "*.localhost", "localhost.localstack.cloud", "*.localhost.localstack.cloud"}

// Checker decides which Host headers are accepted.
type Checker struct {
	loopbackBind bool
	names        []string // exact names and "*.suffix" patterns, lower case
	any          bool
	// last is the Host header last accepted: a client sends the same one
	// on every call, so most calls are answered by one comparison.
	last atomic.Pointer[string]
}

// New returns the checker for a server bound to bindHost (an IP, a name,
// or empty for every interface), accepting the extra names in allowed:
// exact names, "*.example.com" for its subdomains, or "*" for any host.
func New(bindHost string, allowed []string) *Checker {
	c := &Checker{loopbackBind: IsLoopback(bindHost), names: append([]string{}, loopbackNames...)}
	for _, a := range allowed {
		a = strings.ToLower(strings.TrimSpace(a))
		switch {
		case a == "":
		case a == "*":
			c.any = true
		case strings.HasPrefix(a, "."):
			c.names = append(c.names, "*"+a)
		default:
			c.names = append(c.names, strings.TrimSuffix(a, "."))
		}
	}
	return c
}

// IsLoopback reports whether a bind host only serves this machine.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// Allowed reports whether a request's Host header (with or without port)
// is accepted. An IP address is never a rebinding (that needs a name), so
// on a non-loopback bind every IP is accepted, and on a loopback bind every
// loopback IP. An empty Host (HTTP/1.0) names nothing and is accepted.
func (c *Checker) Allowed(hostport string) bool {
	if hostport == "" || c.any {
		return true
	}
	if last := c.last.Load(); last != nil && *last == hostport {
		return true
	}
	if !c.allowed(hostport) {
		return false
	}
	c.last.Store(&hostport)
	return true
}

func (c *Checker) allowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback() || !c.loopbackBind
	}
	for _, n := range c.names {
		if suffix, ok := strings.CutPrefix(n, "*"); ok {
			if strings.HasSuffix(host, suffix) && len(host) > len(suffix) {
				return true
			}
		} else if host == n {
			return true
		}
	}
	return false
}

// Describe says, for an error message, which hosts are accepted.
func (c *Checker) Describe() string {
	extra := append([]string(nil), c.names[len(loopbackNames):]...)
	s := "localhost, *.localhost, 127.0.0.0/8, [::1] and *.localhost.localstack.cloud"
	if !c.loopbackBind {
		s += ", any IP address"
	}
	if len(extra) > 0 {
		s += ", and " + strings.Join(extra, ", ")
	}
	return s
}
