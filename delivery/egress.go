package delivery

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// egress decides where deliveries may connect: never to fanout itself (an
// http subscription to fanout's own Query endpoint would republish
// forever), and only into Options.EndpointAllow when it is set. Both are
// checked on the address actually dialled, after name resolution, so a
// name that resolves to fanout or outside the allowed networks cannot
// get around them.
type egress struct {
	self  func() []string // host:port fanout is reached at
	allow []netip.Prefix

	localOnce sync.Once
	local     map[netip.Addr]bool // this machine's interface addresses
}

// refusedError is a connection egress refused: the endpoint's fault, not
// retried.
type refusedError struct{ reason string }

func (e *refusedError) Error() string { return e.reason }

// ParseEndpointAllow parses a comma-separated list of CIDR blocks or IP
// addresses (--endpoint-allow).
func ParseEndpointAllow(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR block nor an IP address", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// control vets each connection a delivery is about to make (net.Dialer's
// Control: address is the resolved ip:port).
func (g *egress) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil
	}
	return g.check(ap.Addr(), int(ap.Port()))
}

// check refuses fanout's own address and, with an allow list, any address
// outside it.
func (g *egress) check(ip netip.Addr, port int) error {
	ip = ip.Unmap()
	if g.isSelf(ip, port) {
		return &refusedError{"the endpoint is this fanout server itself (" + net.JoinHostPort(ip.String(), strconv.Itoa(port)) + "): delivering to it would loop"}
	}
	if len(g.allow) == 0 {
		return nil
	}
	for _, p := range g.allow {
		if p.Contains(ip) {
			return nil
		}
	}
	return &refusedError{"the endpoint's address " + ip.String() + " is outside --endpoint-allow"}
}

// isSelf reports whether ip:port reaches fanout: one of its addresses, a
// loopback alias of a loopback one, or any local address of a wildcard one.
func (g *egress) isSelf(ip netip.Addr, port int) bool {
	if g.self == nil {
		return false
	}
	if ip.IsUnspecified() {
		ip = netip.IPv4Unspecified() // connecting to 0.0.0.0 or :: reaches this machine
	}
	for _, hp := range g.self() {
		host, p, err := net.SplitHostPort(hp)
		if err != nil || p != strconv.Itoa(port) {
			continue
		}
		for _, s := range g.resolve(host) {
			switch {
			case s == ip,
				(s.IsLoopback() || s.IsUnspecified()) && (ip.IsLoopback() || ip.IsUnspecified()),
				s.IsUnspecified() && g.isLocal(ip):
				return true
			}
		}
	}
	return false
}

// resolve returns the addresses a host of fanout's own stands for.
func (g *egress) resolve(host string) []netip.Addr {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a.Unmap()}
	}
	if isLocalhostName(host) {
		return []netip.Addr{netip.IPv4Unspecified()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	addrs, _ := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	for i := range addrs {
		addrs[i] = addrs[i].Unmap()
	}
	return addrs
}

// isLocalhostName: localhost and its subdomains resolve to loopback.
func isLocalhostName(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

func (g *egress) isLocal(ip netip.Addr) bool {
	g.localOnce.Do(func() {
		g.local = map[netip.Addr]bool{}
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok {
					g.local[ip.Unmap()] = true
				}
			}
		}
	})
	return ip.IsLoopback() || g.local[ip]
}

// CheckEndpoint refuses an http/https subscription endpoint that is fanout
// itself, before any message is sent to it; other protocols pass. The
// error says why, for Subscribe's InvalidParameter.
func (d *Dispatcher) CheckEndpoint(protocol, endpoint string) error {
	if protocol != "http" && protocol != "https" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil // the engine's own validation speaks to that
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return nil
	}
	itself := errors.New("the endpoint " + endpoint + " is this fanout server itself, and delivering to it would loop")
	onPort := false
	if d.egress.self != nil {
		for _, hp := range d.egress.self() {
			if h, p, err := net.SplitHostPort(hp); err == nil && p == port {
				if strings.EqualFold(h, u.Hostname()) {
					return itself // the PublicURL's name, even if it resolves nowhere
				}
				onPort = true
			}
		}
	}
	if !onPort {
		return nil // nothing to resolve: fanout is not on that port
	}
	for _, ip := range d.egress.resolve(u.Hostname()) {
		if d.egress.isSelf(ip, n) {
			return itself
		}
	}
	return nil
}
