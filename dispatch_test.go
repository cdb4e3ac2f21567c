package fanout_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fanout/fanout"
)

// A Query-protocol body past the limit is refused as AWS's front end
// refuses it (413), not cut short and parsed.
func TestQueryBodyLimit(t *testing.T) {
	s, err := fanout.New(fanout.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	body := "Action=CreateTopic&Version=2010-03-31&Name=big&Attributes.entry.1.key=DisplayName&Attributes.entry.1.value=" + strings.Repeat("a", 8<<20)
	req := httptest.NewRequest("POST", "/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge || rec.Body.String() != "HTTP content length exceeded 8388608 bytes." {
		t.Fatalf("%d %.300s", rec.Code, rec.Body)
	}
	// More parameters than net/url parses (10,000) is a malformed form.
	req = httptest.NewRequest("POST", "/", strings.NewReader("Action=ListQueues"+strings.Repeat("&a=1", 10000)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "<Code>MalformedQueryString</Code>") {
		t.Fatalf("10,001 parameters: %d %s", rec.Code, rec.Body)
	}
	// Within the limit, a malformed form is still MalformedQueryString.
	req = httptest.NewRequest("POST", "/", strings.NewReader("Action=ListQueues&%zz"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "<Code>MalformedQueryString</Code>") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}
