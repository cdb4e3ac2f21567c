package playground

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/mux"
)

// newServer serves Routes the way fanout does: on a mux router, ahead of a
// catch-all standing for the AWS protocols.
func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	r := mux.NewRouter()
	Routes(r)
	r.PathPrefix("/").HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "catch-all", http.StatusTeapot)
	})
	s := httptest.NewServer(r)
	t.Cleanup(s.Close)
	return s
}

func do(t *testing.T, method, url, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	// No redirects followed: the test looks at them.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func TestFilterTestEndpoint(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, tc := range []struct {
		name   string
		body   string
		status int
		want   map[string]any // members compared; others ignored
		absent []string       // members that must not be there
	}{
		{
			name:   "match",
			body:   `{"policy":"{\"store\":[\"eu-west\"]}","attributes":{"store":{"DataType":"String","StringValue":"eu-west"}}}`,
			status: 200, want: map[string]any{"valid": true, "matched": true}, absent: []string{"error", "errorOffset"},
		},
		{
			name:   "no match",
			body:   `{"policy":"{\"store\":[\"eu-west\"]}","scope":"MessageAttributes","attributes":{"store":{"DataType":"String","StringValue":"us-east"}}}`,
			status: 200, want: map[string]any{"valid": true, "matched": false},
		},
		{
			name:   "body scope",
			body:   `{"policy":"{\"a\":{\"b\":[1]}}","scope":"MessageBody","message":"{\"a\":{\"b\":[3,1]}}"}`,
			status: 200, want: map[string]any{"valid": true, "matched": true},
		},
		{
			name:   "invalid policy is a 200",
			body:   `{"policy":"{\"store\":[{\"numeric\":[\">\",3,\"<\",1]}]}"}`,
			status: 200, want: map[string]any{"valid": false, "matched": false, "error": "Invalid parameter: FilterPolicy: Bottom must be less than top", "errorOffset": float64(32)},
			absent: []string{"explanation"},
		},
		{
			name:   "bad scope is an invalid policy",
			body:   `{"policy":"{}","scope":"Everything"}`,
			status: 200, want: map[string]any{"valid": false, "error": "Invalid parameter: FilterPolicyScope: Invalid value [Everything]. Please use either MessageBody or MessageAttributes"},
			absent: []string{"errorOffset"},
		},
		{name: "not JSON", body: `policy=x`, status: 400},
		{name: "no policy", body: `{"message":"x"}`, status: 400, want: map[string]any{"error": `"policy" is missing (send "" to test an empty policy)`}},
		{name: "unknown member", body: `{"policy":"","filterPolicy":"{}"}`, status: 400},
		{name: "policy not a string", body: `{"policy":{"a":["b"]}}`, status: 400},
		{name: "bad attributes", body: `{"policy":"","attributes":{"a":{"StringValue":"x"}}}`, status: 400, want: map[string]any{"error": `attribute "a": DataType is missing; it is String, String.Array, Number or Binary`}},
		{name: "too large", body: `{"policy":"` + strings.Repeat(" ", maxRequest) + `"}`, status: 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := do(t, http.MethodPost, s.URL+TestPath, tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if ct := h.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("%v: %s", err, body)
			}
			if status != 200 {
				if msg, _ := got["error"].(string); msg == "" || len(got) != 1 {
					t.Errorf("a refused request answers {\"error\": ...} only; got %s", body)
				}
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %#v, want %#v", k, got[k], v)
				}
			}
			for _, k := range tc.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s is present: %s", k, body)
				}
			}
		})
	}
}

func TestFilterTestExplains(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	_, _, body := do(t, http.MethodPost, s.URL+TestPath,
		`{"policy":"{\"sport\":[\"rugby\",{\"prefix\":\"foot\"}]}","attributes":{"sport":{"DataType":"String","StringValue":"football"}}}`)
	var got Result
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	if got.Explanation == nil || len(got.Explanation.Branches) != 1 || len(got.Explanation.Branches[0].Keys) != 1 {
		t.Fatalf("explanation: %s", body)
	}
	k := got.Explanation.Branches[0].Keys[0]
	if k.Key != "sport" || !k.Matched || k.MatchedValue != `"football"` || k.Condition != `{"prefix":"foot"}` {
		t.Errorf("key explanation %+v", k)
	}
}

func TestPlaygroundPageAndAssets(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, tc := range []struct {
		method, path string
		status       int
		contentType  string
		contains     string
	}{
		{"GET", PagePath, 200, "text/html; charset=utf-8", `<script src="playground/playground.js">`},
		{"HEAD", PagePath, 200, "text/html; charset=utf-8", ""},
		{"GET", PagePath + "/playground.js", 200, "text/javascript; charset=utf-8", "filter/test"},
		{"GET", PagePath + "/playground.css", 200, "text/css; charset=utf-8", "--ok"},
		{"GET", PagePath + "/examples.json", 200, "application/json", `"expect": "match"`},
		{"GET", PagePath + "/", 301, "", ""},
		{"GET", PagePath + "/missing.js", 404, "", ""},
		// Other methods fall through to the next route, as in fanout.
		{"POST", PagePath, 418, "", ""},
		{"GET", TestPath, 418, "", ""},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			status, h, body := do(t, tc.method, s.URL+tc.path, "")
			if status != tc.status {
				t.Fatalf("status %d, want %d", status, tc.status)
			}
			if tc.contentType != "" && h.Get("Content-Type") != tc.contentType {
				t.Errorf("Content-Type %q, want %q", h.Get("Content-Type"), tc.contentType)
			}
			if !strings.Contains(body, tc.contains) {
				t.Errorf("body lacks %q", tc.contains)
			}
			if status == 301 && h.Get("Location") != PagePath {
				t.Errorf("Location %q", h.Get("Location"))
			}
		})
	}
}

// TestPageLoadsNothingFromElsewhere keeps the page usable offline and in
// CI: no URL with a scheme or a protocol-relative one in its files.
func TestPageLoadsNothingFromElsewhere(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"index.html", "playground.css", "playground.js"} {
		b, err := static.ReadFile("static/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"http:", "https:", `"//`, "'//", "url(", "@import"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
}
