package reqlog_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fanout/fanout"
)

// BenchmarkSendMessage measures a JSON SendMessage through fanout's whole
// handler with the request log off (no logger), at info (the wrapper runs,
// successful calls are not written) and at debug (every call written as
// JSON to io.Discard): go test -run '^$' -bench . ./internal/reqlog/
func BenchmarkSendMessage(b *testing.B) {
	for _, mode := range []struct {
		name  string
		level slog.Level
		off   bool
	}{{name: "off", off: true}, {name: "info", level: slog.LevelInfo}, {name: "debug-json", level: slog.LevelDebug}} {
		b.Run(mode.name, func(b *testing.B) {
			opts := fanout.Options{AllowUnsigned: true}
			if !mode.off {
				opts.Logger = slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: mode.level}))
			}
			srv, err := fanout.New(opts)
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Close()
			if _, err := srv.SQS().CreateQueue("bench", nil, nil); err != nil {
				b.Fatal(err)
			}
			h := srv.Handler()
			body := `{"QueueUrl":"http://localhost:4566/000000000000/bench","MessageBody":"` + strings.Repeat("x", 1024) + `"}`
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				req := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/", strings.NewReader(body))
				req.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
				req.Header.Set("Content-Type", "application/x-amz-json-1.0")
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}
