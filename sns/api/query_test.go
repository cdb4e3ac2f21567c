package api_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/fanout/fanout/internal/sdktest"
)

// call sends a raw Query-protocol request and returns status, body and the
// request id header.
func call(t *testing.T, e *env, method string, params url.Values) (int, string, http.Header) {
	t.Helper()
	var req *http.Request
	var err error
	body := params.Encode()
	if method == http.MethodGet {
		req, err = http.NewRequest(method, e.srv.URL()+"/?"+body, nil)
		body = ""
	} else {
		req, err = http.NewRequest(method, e.srv.URL()+"/", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	}
	if err != nil {
		t.Fatal(err)
	}
	sdktest.Sign(req, []byte(body), "sns")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

var ridRE = regexp.MustCompile(`<RequestId>([0-9a-f-]{36})</RequestId>`)

func TestQueryRepliesByteForByte(t *testing.T) {
	t.Parallel()
	e := shared(t)
	n := name(t, "t")
	status, body, h := call(t, e, http.MethodPost, url.Values{"Action": {"CreateTopic"}, "Version": {"2010-03-31"}, "Name": {n}})
	m := ridRE.FindStringSubmatch(body)
	if status != 200 || m == nil || h.Get("x-amzn-RequestId") != m[1] || h.Get("Content-Type") != "text/xml" {
		t.Fatalf("%d %v %s", status, h, body)
	}
	want := `<?xml version="1.0"?><CreateTopicResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><CreateTopicResult><TopicArn>arn:aws:sns:us-east-1:000000000000:` +
		n + `</TopicArn></CreateTopicResult><ResponseMetadata><RequestId>` + m[1] + `</RequestId></ResponseMetadata></CreateTopicResponse>`
	if body != want {
		t.Fatalf("body\n%s\nwant\n%s", body, want)
	}

	// A signed GET is refused: fanout takes Query calls only as form POSTs
	// (a web page can make a browser send a GET); SNS's own links, under
	// /_fanout/sns/, stay GETs.
	status, body, _ = call(t, e, http.MethodGet, url.Values{"Action": {"GetTopicAttributes"}, "Version": {"2010-03-31"}, "TopicArn": {"arn:aws:sns:us-east-1:000000000000:" + name(t, "gone")}})
	if status != 405 || !strings.Contains(body, "<Code>MethodNotAllowed</Code>") {
		t.Fatalf("signed GET: %d %s", status, body)
	}
	status, body, _ = call(t, e, http.MethodPost, url.Values{"Action": {"GetTopicAttributes"}, "Version": {"2010-03-31"}, "TopicArn": {"arn:aws:sns:us-east-1:000000000000:" + name(t, "gone")}})
	m = ridRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatal(body)
	}
	want = `<?xml version="1.0"?><ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>Sender</Type><Code>NotFound</Code><Message>Topic does not exist</Message></Error><RequestId>` + m[1] + `</RequestId></ErrorResponse>`
	if status != 404 || body != want {
		t.Fatalf("%d\n%s\nwant\n%s", status, body, want)
	}

	status, body, _ = call(t, e, http.MethodPost, url.Values{"Action": {"FlyToTheMoon"}, "Version": {"2010-03-31"}})
	if status != 400 || !strings.Contains(body, "<Code>InvalidAction</Code><Message>The action FlyToTheMoon is not valid for this endpoint.</Message>") {
		t.Fatalf("%d %s", status, body)
	}
	// Members the SDKs would refuse to leave out are reported as AWS's
	// validator does.
	status, body, _ = call(t, e, http.MethodPost, url.Values{"Action": {"CreateTopic"}, "Version": {"2010-03-31"}})
	if status != 400 || !strings.Contains(body, "<Code>ValidationError</Code><Message>1 validation error detected: Value null at &apos;name&apos; failed to satisfy constraint: Member must not be null</Message>") {
		t.Fatalf("%d %s", status, body)
	}
	// Actions without output have no Result element; tag actions an empty one.
	status, body, _ = call(t, e, http.MethodPost, url.Values{"Action": {"DeleteTopic"}, "Version": {"2010-03-31"}, "TopicArn": {"arn:aws:sns:us-east-1:000000000000:" + n}})
	if status != 200 || strings.Contains(body, "Result") || !strings.HasPrefix(body, `<?xml version="1.0"?><DeleteTopicResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><ResponseMetadata>`) {
		t.Fatalf("%d %s", status, body)
	}
}
