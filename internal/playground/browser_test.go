package playground

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fanout/fanout/internal/browsertest"
)

// newBrowser starts headless Chromium (see internal/browsertest for
// FANOUT_CHROMIUM and FANOUT_REQUIRE_BROWSER) and returns its tab and what
// the page's scripts threw. FANOUT_SCREENSHOT_DIR keeps the screenshots.
func newBrowser(t *testing.T) (ctx context.Context, pageErrors func() []string) {
	t.Helper()
	b := browsertest.New(t, 1280, 1000, 90*time.Second)
	return b.Ctx, b.Errors
}

// replaceText selects everything in a text box and types text over it, key
// by key, as a person would; the page sees one input event per key.
func replaceText(id, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		sel := fmt.Sprintf(`document.getElementById(%q)`, id)
		if _, err := chromedp.Evaluate[bool](sel+`.focus(), `+sel+`.select(), true`)(ctx, t); err != nil {
			return err
		}
		if _, err := chromedp.KeyEvent(text)(ctx, t); err != nil {
			return err
		}
		got, err := chromedp.Evaluate[string](sel+`.value`)(ctx, t)
		if err != nil {
			return err
		}
		if got != text {
			return fmt.Errorf("#%s holds %q after typing %q", id, got, text)
		}
		return nil
	})
}

// waitVerdict waits until the verdict box shows state for the text now in
// the boxes (the page marks it stale from an edit until the reply to that
// edit is shown) and returns its text.
func waitVerdict(ctx context.Context, t *testing.T, state string) string {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](
		fmt.Sprintf(`(v => !v.dataset.stale && v.dataset.state === %q)(document.getElementById('verdict'))`, state),
		chromedp.WithPollingTimeout(15*time.Second)))
	if err != nil {
		now, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('verdict').dataset.state + ': ' + document.getElementById('verdict').innerText`))
		t.Fatalf("waiting for the verdict %q: %v; the page shows %q", state, err, now)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#verdict .verdict-word').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func text(ctx context.Context, t *testing.T, js string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return s
}

func TestPlaygroundInChromium(t *testing.T) {
	t.Parallel()
	ctx, pageErrors := newBrowser(t)
	srv := newServer(t)
	shots := os.Getenv("FANOUT_SCREENSHOT_DIR")
	if shots == "" {
		shots = t.TempDir()
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+PagePath)); err != nil {
		t.Fatal(err)
	}
	// The page opens on its first example, which matches.
	if got := waitVerdict(ctx, t, "match"); got != "Match" {
		t.Fatalf("first example: verdict %q", got)
	}
	if n := text(ctx, t, `String(document.querySelectorAll('#example option').length - 1)`); n != fmt.Sprint(len(Examples())) {
		t.Errorf("%s examples listed, want %d", n, len(Examples()))
	}

	// A body-scope policy and a message that passes it.
	err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input[name="scope"][value="MessageBody"]`)),
		replaceText("policy", `{"order":{"total":[{"numeric":[">=",100]}],"region":[{"prefix":"eu-"}]}}`),
		replaceText("message", `{"order":{"total":150,"region":"eu-west"}}`),
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := waitVerdict(ctx, t, "match"); got != "Match" {
		t.Errorf("verdict %q, want Match", got)
	}
	screenshot(ctx, t, shots, "match")
	if got := text(ctx, t, `document.getElementById('explanation').innerText`); !strings.Contains(got, `150 matches {"numeric":[">=",100]}`) {
		t.Errorf("explanation lacks the matching value:\n%s", got)
	}

	// Too small an order: no match, and the page says which key failed.
	if err := chromedp.Do(ctx, replaceText("message", `{"order":{"total":50,"region":"eu-west"}}`)); err != nil {
		t.Fatal(err)
	}
	if got := waitVerdict(ctx, t, "no-match"); got != "No match" {
		t.Errorf("verdict %q, want No match", got)
	}
	screenshot(ctx, t, shots, "no-match")
	failed := text(ctx, t, `[...document.querySelectorAll('#explanation tr.bad td.key')].map(e => e.textContent).join(',')`)
	if failed != "order.total" {
		t.Errorf("keys shown as failing: %q, want order.total", failed)
	}

	// An invalid policy: AWS's message, and the spot pointed at.
	if err := chromedp.Do(ctx, replaceText("policy", `{"order":{"total":[{"numeric":[">",3,"<",1]}]}}`)); err != nil {
		t.Fatal(err)
	}
	if got := waitVerdict(ctx, t, "invalid"); got != "Invalid policy" {
		t.Errorf("verdict %q, want Invalid policy", got)
	}
	if got := text(ctx, t, `document.querySelector('#policy-error .aws-message').textContent`); got != "Invalid parameter: FilterPolicy: Bottom must be less than top" {
		t.Errorf("error shown: %q", got)
	}
	if got := text(ctx, t, `document.querySelector('#policy-error mark').textContent`); got != "1" {
		t.Errorf("highlighted %q, want the top of the range, 1", got)
	}
	if got := text(ctx, t, `document.getElementById('policy-status').textContent`); got != "invalid" {
		t.Errorf("policy badge %q", got)
	}

	screenshot(ctx, t, shots, "invalid")
	if errs := pageErrors(); len(errs) > 0 {
		t.Errorf("the page's scripts failed: %q", errs)
	}
}

// screenshot saves the whole page as dir/playground-name.png and checks
// that a PNG was written.
func screenshot(ctx context.Context, t *testing.T, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "playground-"+name+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() == 0 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("screenshot %s: %v, %d bytes", file, err, len(png))
	}
}
