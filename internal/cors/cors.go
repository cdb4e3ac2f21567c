// Package cors decides which web pages may call fanout from a browser and
// answers their CORS preflights. Pages from other origins get no CORS
// headers, so the browser neither sends their non-simple requests nor lets
// them read an answer, and their simple requests (a form POST, a text/plain
// fetch) are refused outright, since the browser would send those unasked.
package cors

import (
	"net/http"
	"strings"
)

// DefaultOrigins are the pages served from this machine, on any port.
var DefaultOrigins = []string{
	"http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*",
	"https://localhost:*", "https://127.0.0.1:*", "https://[::1]:*",
}

// allowHeaders are the request headers the AWS SDKs for JavaScript send;
// any header starting with amz-sdk-, x-amz- or x-amzn- (x-amzn-query-mode,
// which the SQS client sends) is allowed too.
var allowHeaders = map[string]bool{"authorization": true, "content-type": true, "x-amz-target": true, "x-amz-date": true, "x-amz-user-agent": true, "x-amz-security-token": true, "x-amz-content-sha256": true}

// exposeHeaders are the response headers a page's SDK reads.
const exposeHeaders = "x-amzn-RequestId, x-amzn-query-error, x-amzn-ErrorType, x-amz-request-id, x-amz-id-2, Date, Content-Length, Content-Type, ETag"

// Policy is a set of allowed origins.
type Policy struct {
	any      bool
	patterns []string // exact origins, or "scheme://host:*" for any port
}

// New returns the policy for origins: exact origins (https://app.example),
// "scheme://host:*" for any port of a host, or "*" for every origin.
// No origins means DefaultOrigins.
func New(origins []string) *Policy {
	if len(origins) == 0 {
		origins = DefaultOrigins
	}
	p := &Policy{}
	for _, o := range origins {
		o = strings.TrimRight(strings.TrimSpace(o), "/")
		switch o {
		case "":
		case "*":
			p.any = true
		default:
			p.patterns = append(p.patterns, strings.ToLower(o))
		}
	}
	return p
}

// Allowed reports whether a page of origin may call fanout. A page served
// by fanout itself (origin scheme://Host, the Host already checked against
// DNS rebinding) always may.
func (p *Policy) Allowed(origin string, r *http.Request) bool {
	if p.any {
		return true
	}
	o := strings.ToLower(origin)
	if o == "http://"+strings.ToLower(r.Host) && r.TLS == nil || o == "https://"+strings.ToLower(r.Host) && r.TLS != nil {
		return true
	}
	for _, pat := range p.patterns {
		if prefix, ok := strings.CutSuffix(pat, ":*"); ok {
			if o == prefix || strings.HasPrefix(o, prefix+":") && isPort(o[len(prefix)+1:]) {
				return true
			}
		} else if o == pat {
			return true
		}
	}
	return false
}

func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Wrap applies the policy in front of next: preflights of allowed origins
// are answered, the same way whatever the path (so a preflight tells a page
// nothing a GET would not); requests of allowed origins get the CORS
// headers; requests from other origins are refused with refuse.
func (p *Policy) Wrap(next http.Handler, refuse func(w http.ResponseWriter, r *http.Request, origin string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r) // not a browser's cross-origin or POST request
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		allowed := p.Allowed(origin, r)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if !allowed {
				w.WriteHeader(http.StatusForbidden) // no CORS headers: the browser stops here
				return
			}
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, HEAD")
			if hs := requestedHeaders(r.Header.Get("Access-Control-Request-Headers")); hs != "" {
				h.Set("Access-Control-Allow-Headers", hs)
			}
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if !allowed {
			refuse(w, r, origin)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Expose-Headers", exposeHeaders)
		next.ServeHTTP(w, r)
	})
}

// requestedHeaders returns the requested headers fanout allows, lower case.
func requestedHeaders(list string) string {
	var ok []string
	for _, h := range strings.Split(list, ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if allowHeaders[h] || strings.HasPrefix(h, "amz-sdk-") || strings.HasPrefix(h, "x-amz-") || strings.HasPrefix(h, "x-amzn-") {
			ok = append(ok, h)
		}
	}
	return strings.Join(ok, ", ")
}
