package conformance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/fanout/fanout/internal/sdktest"
)

// A small client for the Query protocol (form-encoded POST, XML answers),
// signed with SigV4 as every AWS SDK signs it, so that the suite can check
// the XML side of SQS (which current SDKs no longer speak) and the raw
// XML of SNS, errors included.

// xmlNode is one element of a parsed XML document.
type xmlNode struct {
	Name string
	Text string
	Kids []*xmlNode
}

// Child returns the first child named name along the path, or nil.
func (n *xmlNode) Child(path ...string) *xmlNode {
	cur := n
	for _, p := range path {
		if cur == nil {
			return nil
		}
		var next *xmlNode
		for _, k := range cur.Kids {
			if k.Name == p {
				next = k
				break
			}
		}
		cur = next
	}
	return cur
}

// Text of the element at path, or "".
func (n *xmlNode) Get(path ...string) string {
	if c := n.Child(path...); c != nil {
		return c.Text
	}
	return ""
}

// All returns the children named name.
func (n *xmlNode) All(name string) []*xmlNode {
	if n == nil {
		return nil
	}
	var out []*xmlNode
	for _, k := range n.Kids {
		if k.Name == name {
			out = append(out, k)
		}
	}
	return out
}

// Names lists the names of the children, in order.
func (n *xmlNode) Names() []string {
	if n == nil {
		return nil
	}
	out := make([]string, len(n.Kids))
	for i, k := range n.Kids {
		out[i] = k.Name
	}
	return out
}

// Pairs reads repeated <Attribute><Name/><Value/></Attribute>-style
// children (SQS) or <entry><key/><value/></entry> (SNS) into a map.
func (n *xmlNode) Pairs(elem, key, value string) map[string]string {
	out := map[string]string{}
	for _, e := range n.All(elem) {
		out[e.Get(key)] = e.Get(value)
	}
	return out
}

func parseXML(b []byte) (*xmlNode, error) {
	d := xml.NewDecoder(strings.NewReader(string(b)))
	var stack []*xmlNode
	var root *xmlNode
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &xmlNode{Name: t.Name.Local}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.Kids = append(p.Kids, n)
			} else if root == nil {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].Text += string(t)
			}
		}
	}
	if root == nil {
		return nil, errors.New("no XML element")
	}
	return root, nil
}

// queryAnswer is a Query-protocol response.
type queryAnswer struct {
	Status int
	Header http.Header
	Raw    string
	Root   *xmlNode
}

// Code, Type and Message of an <ErrorResponse>.
func (a queryAnswer) Code() string    { return a.Root.Get("Error", "Code") }
func (a queryAnswer) Type() string    { return a.Root.Get("Error", "Type") }
func (a queryAnswer) Message() string { return a.Root.Get("Error", "Message") }

// Result is the <ActionResult> element of a success.
func (a queryAnswer) Result(action string) *xmlNode { return a.Root.Child(action + "Result") }

// queryURL is where the Query protocol of service is served.
func queryURL(service string) string {
	if onAWS {
		return "https://" + service + "." + region + ".amazonaws.com/"
	}
	return endpoint + "/"
}

// sqsQuery calls an SQS action over the Query protocol with the given
// name/value pairs.
func sqsQuery(ctx context.Context, action string, kv ...string) queryAnswer {
	GinkgoHelper()
	return queryPost(ctx, queryURL("sqs"), "sqs", action, "2012-11-05", kv...)
}

// sqsQueryAt posts the action to a queue's own URL, with no QueueUrl
// parameter, as the Query protocol allows.
func sqsQueryAt(ctx context.Context, queueURL, action string, kv ...string) queryAnswer {
	GinkgoHelper()
	return queryPost(ctx, queueURL, "sqs", action, "2012-11-05", kv...)
}

// snsQuery calls an SNS action (SNS only has the Query protocol).
func snsQuery(ctx context.Context, action string, kv ...string) queryAnswer {
	GinkgoHelper()
	return queryPost(ctx, queryURL("sns"), "sns", action, "2010-03-31", kv...)
}

func queryPost(ctx context.Context, target, service, action, version string, kv ...string) queryAnswer {
	GinkgoHelper()
	Expect(len(kv)%2).To(Equal(0), "name/value pairs")
	form := url.Values{"Action": {action}, "Version": {version}}
	for i := 0; i < len(kv); i += 2 {
		form.Add(kv[i], kv[i+1])
	}
	body := form.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	sum := sha256.Sum256([]byte(body))
	cr, err := creds.Retrieve(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(v4.NewSigner().SignHTTP(ctx, cr, req, hex.EncodeToString(sum[:]), service, region, time.Now())).To(Succeed())
	resp, err := sdktest.HTTPClient().Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	root, err := parseXML(raw)
	Expect(err).NotTo(HaveOccurred(), "%s answered %d with a body that is not XML: %q", action, resp.StatusCode, raw)
	return queryAnswer{Status: resp.StatusCode, Header: resp.Header, Raw: string(raw), Root: root}
}

// BeQueryError matches a Query answer that is an <ErrorResponse> with the
// given HTTP status, code and fault type, and a message satisfying msg
// (a string for equality, or a matcher).
func BeQueryError(status int, code, faultType string, msg any) OmegaMatcher {
	m, ok := msg.(OmegaMatcher)
	if !ok {
		m = Equal(msg)
	}
	return And(
		WithTransform(func(a queryAnswer) string { return a.Root.Name }, Equal("ErrorResponse")),
		WithTransform(func(a queryAnswer) int { return a.Status }, Equal(status)),
		WithTransform(func(a queryAnswer) string { return a.Code() }, Equal(code)),
		WithTransform(func(a queryAnswer) string { return a.Type() }, Equal(faultType)),
		WithTransform(func(a queryAnswer) string { return a.Message() }, m),
	)
}

// BeQuerySuccess matches a 200 answer whose root is <ActionResponse>.
func BeQuerySuccess(action string) OmegaMatcher {
	return And(
		WithTransform(func(a queryAnswer) int { return a.Status }, Equal(http.StatusOK)),
		WithTransform(func(a queryAnswer) string { return a.Root.Name }, Equal(action+"Response")),
	)
}
