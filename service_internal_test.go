package fanout

import "testing"

// TestService: a Query call goes to the service its Version names, else to
// the one its credential scope names, else to the one that has its action.
func TestService(t *testing.T) {
	const sig = ", SignedHeaders=host;x-amz-date, Signature=00"
	for _, c := range []struct{ version, auth, action, want string }{
		{"2012-11-05", "", "Publish", "sqs"},
		{"2010-03-31", "", "SendMessage", "sns"},
		{"", "AWS4-HMAC-SHA256 Credential=AKID/20261207/us-east-1/sqs/aws4_request" + sig, "Publish", "sqs"},
		{"", "AWS4-HMAC-SHA256 Credential=AKID/20261207/us-east-1/sns/aws4_request" + sig, "SendMessage", "sns"},
		{"", "AWS4-HMAC-SHA256 Credential=AKID/20261207/us-east-1/s3/aws4_request" + sig, "SendMessage", "sqs"},
		{"", "AWS4-HMAC-SHA256 Credential=AKID/20261207/us-east-1" + sig, "SendMessage", "sqs"},
		{"", "AWS4-HMAC-SHA256 Credential=AKID/20261207/us-east-1/sns", "SendMessage", "sns"},
		{"", "", "Publish", "sns"},
	} {
		if got := service(c.version, c.auth, c.action); got != c.want {
			t.Errorf("service(%q, %q, %q) = %q, want %q", c.version, c.auth, c.action, got, c.want)
		}
	}
}
