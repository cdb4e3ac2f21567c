package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/browsertest"
)

// pageResult is what browser/sdk.js's fanoutRun resolves to.
type pageResult struct {
	OK        bool     `json:"ok"`
	QueueURL  string   `json:"queueUrl"`
	TopicArn  string   `json:"topicArn"`
	MessageID string   `json:"messageId"`
	Bodies    []string `json:"bodies"`
	Name      string   `json:"name"`
	Message   string   `json:"message"`
}

// bundle builds browser/sdk.js and the AWS SDK for JavaScript v3 into one
// browser script with esbuild (a dev dependency in package.json).
func bundle(t *testing.T) []byte {
	t.Helper()
	esbuild := filepath.Join("node_modules", ".bin", "esbuild")
	if _, err := os.Stat(esbuild); err != nil {
		if os.Getenv("FANOUT_REQUIRE_NODE") == "1" {
			t.Fatal("node_modules/.bin/esbuild is missing: run npm ci in e2e/")
		}
		t.Skip("node_modules/.bin/esbuild is missing (npm ci in e2e/); FANOUT_REQUIRE_NODE=1 makes this a failure")
	}
	out := filepath.Join(t.TempDir(), "sdk.js")
	cmd := exec.Command(esbuild, "browser/sdk.js", "--bundle", "--format=iife", "--platform=browser", "--log-level=warning", "--outfile="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, b)
	}
	js, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// pageServer serves the page and its script, from an origin other than
// fanout's (another port, or another name).
func pageServer(t *testing.T, js []byte) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html><head><title>app</title><script src="/sdk.js"></script></head><body>app</body></html>`))
	})
	mux.HandleFunc("/sdk.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write(js)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return port
}

// runPage opens page in the browser and runs fanoutRun against endpoint.
func runPage(t *testing.T, ctx context.Context, page, endpoint string) pageResult {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
		t.Fatal(err)
	}
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fanoutRun(`+quote(endpoint)+`)`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", page, err)
	}
	var r pageResult
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return r
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestBrowserPagesAndCORS: a page served from this machine calls SQS (AWS
// JSON 1.0) and SNS (Query) through the AWS SDK for JavaScript v3 in
// headless Chromium, across origins, by fanout's CORS answers; a page of
// another origin gets no CORS answer, so its calls fail in the browser and
// change nothing, until --cors-origins names it.
func TestBrowserPagesAndCORS(t *testing.T) {
	t.Parallel()
	js := bundle(t)
	port := pageServer(t, js)
	// pages.evil.test is a site the developer visits; the browser resolves
	// it to this machine, where the page server runs.
	b := browsertest.New(t, 1280, 800, 2*time.Minute, chromedp.Flag("host-resolver-rules", "MAP pages.evil.test 127.0.0.1"))
	ctx := b.Ctx

	s, err := fanout.Start(context.Background(), fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	got := runPage(t, ctx, "http://127.0.0.1:"+port+"/", s.URL())
	if !got.OK || got.QueueURL != s.URL()+"/000000000000/browser" || got.TopicArn != "arn:aws:sns:us-east-1:000000000000:browser" ||
		got.MessageID == "" || strings.Join(got.Bodies, "|") != "from the page|published by the page" {
		t.Fatalf("loopback page: %+v", got)
	}

	// The same page from another site.
	evil := "http://pages.evil.test:" + port + "/"
	other, err := fanout.Start(context.Background(), fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	got = runPage(t, ctx, evil, other.URL())
	if got.OK || got.Name != "TypeError" {
		t.Fatalf("page of another origin: %+v", got)
	}
	if q := other.SQS().ListQueues(""); len(q) != 0 {
		t.Fatalf("the other origin's page created %v", q)
	}

	// Named in --cors-origins, that origin may call.
	named, err := fanout.Start(context.Background(), fanout.Options{CORSOrigins: []string{"http://pages.evil.test:*"}})
	if err != nil {
		t.Fatal(err)
	}
	defer named.Close()
	if got = runPage(t, ctx, evil, named.URL()); !got.OK || len(got.Bodies) != 2 {
		t.Fatalf("origin named in CORSOrigins: %+v", got)
	}
	for _, e := range b.Errors() {
		if !strings.Contains(e, "CORS") && !strings.Contains(e, "Failed to fetch") && !strings.Contains(e, "ERR_FAILED") {
			t.Errorf("page error: %s", e)
		}
	}
}
