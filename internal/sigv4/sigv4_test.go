package sigv4

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestAWSDocumentationExample: the worked example of AWS's SigV4 guide
// (IAM ListUsers, 20150830T123600Z) verifies, and fails with another secret.
func TestAWSDocumentationExample(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest("GET", "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08", nil)
	req.Host = "iam.amazonaws.com"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	req.Header.Set("X-Amz-Date", "20150830T123600Z")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7")
	s, e := Parse(req)
	if e != nil || s == nil {
		t.Fatal(e)
	}
	v := NewVerifier([]Key{{ID: "AKIDEXAMPLE", Secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}})
	v.Now = func() time.Time { return time.Date(2015, 8, 30, 12, 40, 0, 0, time.UTC) }
	if _, e := v.Verify(req, s, nil, "iam"); e != nil {
		t.Fatal(e)
	}
	if _, e := v.Verify(req, s, nil, "sqs"); e == nil || !strings.Contains(e.Message, "correct service: 'sqs'") {
		t.Fatal(e)
	}
	w := NewVerifier([]Key{{ID: "AKIDEXAMPLE", Secret: "other"}})
	w.Now = v.Now
	if _, e := w.Verify(req, s, nil, "iam"); e == nil || e.QueryCode != "SignatureDoesNotMatch" {
		t.Fatal(e)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ auth, date, want string }{
		{"Basic dXNlcjpwYXNz", "", "Unsupported authorization type"},
		{"AWS4-HMAC-SHA256 Credential=a/20150830/us-east-1/sqs/aws4_request", "20150830T123600Z", "Authorization header requires 'Signature' parameter. Authorization header requires 'SignedHeaders' parameter."},
		{"AWS4-HMAC-SHA256 Credential=a/20150830/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00", "", "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."},
		{"AWS4-HMAC-SHA256 Credential=a/b, SignedHeaders=host, Signature=00", "20150830T123600Z", "Credential must have exactly 5 slash-delimited elements"},
		{"AWS4-HMAC-SHA256 Credential=a/20150830/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=00", "yesterday", "Date must be in ISO-8601 'basic format'"},
	} {
		req := httptest.NewRequest("POST", "/", nil)
		req.Header.Set("Authorization", c.auth)
		if c.date != "" {
			req.Header.Set("X-Amz-Date", c.date)
		}
		_, e := Parse(req)
		if e == nil || e.QueryCode != "IncompleteSignature" || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: %v", c.auth, e)
		}
	}
	if s, e := Parse(httptest.NewRequest("POST", "/", nil)); s != nil || e != nil {
		t.Error("an unsigned request has no signature and no error")
	}
	if _, e := Parse(httptest.NewRequest("GET", "/?X-Amz-Signature=00", nil)); e == nil || !strings.Contains(e.Message, "must include 'X-Amz-Credential'") {
		t.Error(e)
	}
}

func TestReadKeys(t *testing.T) {
	t.Parallel()
	keys, err := ReadKeys(strings.NewReader("# team keys\nAKID1 secret1 111111111111\n\n  AKID2\tsecret/2+x  \n"))
	if err != nil || len(keys) != 2 || keys[0] != (Key{"AKID1", "secret1", "111111111111"}) || keys[1] != (Key{"AKID2", "secret/2+x", ""}) {
		t.Fatal(keys, err)
	}
	for _, bad := range []string{"", "# only a comment\n", "AKID1\n", "A B 12\n", "A B C D\n", "A s\nA t\n"} {
		if _, err := ReadKeys(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// BenchmarkVerify: the cost --credentials adds to a call (a 1 KiB body).
func BenchmarkVerify(b *testing.B) {
	req := httptest.NewRequest("GET", "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08", nil)
	req.Host = "iam.amazonaws.com"
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	req.Header.Set("X-Amz-Date", "20150830T123600Z")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7")
	v := NewVerifier([]Key{{ID: "AKIDEXAMPLE", Secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}})
	v.Now = func() time.Time { return time.Date(2015, 8, 30, 12, 40, 0, 0, time.UTC) }
	body := make([]byte, 1024)
	b.ReportAllocs()
	for b.Loop() {
		s, _ := Parse(req)
		_, _ = v.Verify(req, s, body, "iam") // fails on the body's hash: the same work
	}
}
