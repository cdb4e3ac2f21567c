// Package reqlog writes one log line per AWS call: service, action, queue
// or topic, HTTP status, AWS error code, duration and request id.
//
// Successful calls are logged at debug level and failed ones at info (5xx
// at error), so that the default level leaves a green test run quiet while
// a failing CI run still shows every call that failed, and --log-level
// debug shows them all. The handlers report what only they know (the
// action and resource once decoded, the error code) through
// awswire.CallNoter, which the writer wrapped here implements.
package reqlog

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fanout/fanout/internal/awswire"
)

// Hints say which flag turns off the guard rail behind an error code; the
// line of a call that hit one carries it as "disable".
type Hints map[string]string

// hint finds the hint for code, which may carry a Query prefix
// (AWS.SimpleQueueService.PurgeQueueInProgress).
func (h Hints) hint(code string) string {
	if v, ok := h[code]; ok {
		return v
	}
	if i := strings.LastIndexByte(code, '.'); i >= 0 {
		return h[code[i+1:]]
	}
	return ""
}

// Wrap returns next with a request log on log. When log takes neither
// info nor debug lines, it returns next itself: no cost at all.
func Wrap(next http.Handler, log *slog.Logger, hints Hints) http.Handler {
	ctx := context.Background()
	if log == nil || !log.Enabled(ctx, slog.LevelInfo) {
		return next
	}
	debug := log.Enabled(ctx, slog.LevelDebug)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := pool.Get().(*call)
		c.ResponseWriter = w
		start := time.Now()
		next.ServeHTTP(c, r)
		elapsed := time.Since(start)
		if c.status == 0 {
			c.status = http.StatusOK
		}
		if c.action == "" { // refused before reaching a service
			c.service, c.action = "-", r.Header.Get("X-Amz-Target")
			if c.action == "" && r.Form != nil {
				c.action = r.Form.Get("Action")
			}
		}
		level := slog.LevelDebug
		switch {
		case c.status >= 500:
			level = slog.LevelError
		case c.status >= 400:
			level = slog.LevelInfo
		}
		if level > slog.LevelDebug || debug {
			attrs := make([]slog.Attr, 0, 9)
			attrs = append(attrs, slog.String("service", c.service), slog.String("action", c.action))
			if c.resource != "" {
				key := "queue"
				if c.service == "sns" {
					key = "topic"
				}
				attrs = append(attrs, slog.String(key, c.resource))
			}
			attrs = append(attrs, slog.Int("status", c.status))
			if c.code != "" {
				attrs = append(attrs, slog.String("error", c.code))
				if h := hints.hint(c.code); h != "" {
					attrs = append(attrs, slog.String("disable", h))
				}
			}
			attrs = append(attrs,
				slog.Float64("ms", float64(elapsed.Microseconds())/1000),
				slog.String("request_id", w.Header().Get(awswire.RequestIDHeader)))
			log.LogAttrs(r.Context(), level, "aws call", attrs...)
		}
		*c = call{}
		pool.Put(c)
	})
}

var pool = sync.Pool{New: func() any { return new(call) }}

// call is the response writer of one logged call.
type call struct {
	http.ResponseWriter
	status                          int
	service, action, resource, code string
}

func (c *call) NoteCall(service, action, resource string) {
	c.service, c.action, c.resource = service, action, resource
}

func (c *call) NoteError(code string) { c.code = code }

func (c *call) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *call) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (c *call) Unwrap() http.ResponseWriter { return c.ResponseWriter }
