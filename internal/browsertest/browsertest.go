// Package browsertest starts headless Chromium for the tests of fanout's
// pages, as Debian installs it. FANOUT_CHROMIUM names another binary;
// FANOUT_REQUIRE_BROWSER=1 turns the skip on machines without one into a
// failure (CI sets it).
package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

const defaultChromium = "/usr/bin/chromium"

// ChromiumPath returns the browser to run, or skips (fails with
// FANOUT_REQUIRE_BROWSER=1) when there is none.
func ChromiumPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("FANOUT_CHROMIUM")
	if path == "" {
		path = defaultChromium
	}
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("no Chromium at %s (apt-get install chromium, or set FANOUT_CHROMIUM): %v", path, err)
		if os.Getenv("FANOUT_REQUIRE_BROWSER") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; set FANOUT_REQUIRE_BROWSER=1 to make this a failure")
	}
	return path
}

// Browser is one Chromium tab. Errors thrown by the page's scripts and
// JavaScript dialogs (alert, confirm) it opened are collected.
type Browser struct {
	Ctx    context.Context
	mu     sync.Mutex
	errs   []string
	alerts []string
}

// New starts Chromium with a fresh profile, a window of width×height, and
// returns its tab; everything ends with the test, and within limit. Flags
// are added to Chromium's command line.
func New(t *testing.T, width, height int, limit time.Duration, flags ...chromedp.ExecAllocatorOption) *Browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(ChromiumPath(t)),
		chromedp.Headless,
		// Root in a container has no usable sandbox.
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		// Nothing but the test server is reachable: keep Chromium from
		// trying to phone home.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
	}
	opts = append(opts, flags...)
	base, cancelTimeout := context.WithTimeout(context.Background(), limit)
	alloc, cancelAlloc := chromedp.NewExecAllocator(base, opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		cancelTimeout()
	})
	b := &Browser{Ctx: ctx}
	err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = ev.ExceptionDetails.Text
			if ex := ev.ExceptionDetails.Exception; ex != nil {
				msg += " " + ex.Description
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type != runtime.ConsoleAPICalledTypeError {
				return
			}
			msg = "console.error"
			for _, a := range ev.Args {
				msg += " " + string(a.Value)
			}
		case *page.EventJavascriptDialogOpening:
			b.mu.Lock()
			b.alerts = append(b.alerts, string(ev.Type)+": "+ev.Message)
			b.mu.Unlock()
			go func() { _, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{}) }()
			return
		default:
			return
		}
		b.mu.Lock()
		b.errs = append(b.errs, msg)
		b.mu.Unlock()
	})
	if err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return b
}

// Errors returns what the page's scripts threw or logged as errors.
func (b *Browser) Errors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errs...)
}

// Dialogs returns the JavaScript dialogs the page opened (none should).
func (b *Browser) Dialogs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.alerts...)
}

// Screenshot saves the whole page as dir/name.png and checks that a PNG
// was written.
func (b *Browser) Screenshot(t *testing.T, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(b.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("screenshot %s: not a PNG", file)
	}
}
