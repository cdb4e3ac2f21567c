package sigv4

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fanout/fanout/awserr"
)

// maxSkew is AWS's rule: a signature's time may be at most 15 minutes from
// the server's, either way.
const maxSkew = 15 * time.Minute

// unsignedPayload is the payload hash a client may sign instead of the body's.
const unsignedPayload = "UNSIGNED-PAYLOAD"

// Key is one access key: its id, secret and the account it belongs to.
type Key struct {
	ID, Secret, Account string
}

// ReadKeys reads a credentials file: one key a line, "ACCESS_KEY_ID SECRET
// [ACCOUNT]" separated by spaces or tabs; blank lines and lines starting
// with # are skipped. An empty ACCOUNT is left for the caller to default.
func ReadKeys(r io.Reader) ([]Key, error) {
	var keys []Key
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || len(f) > 3 {
			return nil, fmt.Errorf("line %d: want ACCESS_KEY_ID SECRET [ACCOUNT], got %d fields", n, len(f))
		}
		k := Key{ID: f[0], Secret: f[1]}
		if len(f) == 3 {
			k.Account = f[2]
			if len(k.Account) != 12 || strings.Trim(k.Account, "0123456789") != "" {
				return nil, fmt.Errorf("line %d: account %q is not 12 digits", n, k.Account)
			}
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("line %d: access key %s listed twice", n, k.ID)
		}
		seen[k.ID] = true
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no keys")
	}
	return keys, nil
}

// Verifier checks signatures against a fixed set of keys.
type Verifier struct {
	keys map[string]Key
	// Now is the time signatures are checked against; default time.Now.
	// It is the wall clock, not fanout's movable clock: clients sign with theirs.
	Now func() time.Time
}

// NewVerifier returns a Verifier for keys.
func NewVerifier(keys []Key) *Verifier {
	v := &Verifier{keys: make(map[string]Key, len(keys)), Now: time.Now}
	for _, k := range keys {
		v.keys[k.ID] = k
	}
	return v
}

// Verify checks that s, read from r, is a valid signature of r with body
// by a known key, for one of services, and returns that key.
func (v *Verifier) Verify(r *http.Request, s *Signature, body []byte, services ...string) (Key, *awserr.Error) {
	now := v.Now().UTC()
	if e := checkTime(s, now); e != nil {
		return Key{}, e
	}
	key, ok := v.keys[s.AccessKeyID]
	if !ok {
		return Key{}, ErrUnknownKey.New("The security token included in the request is invalid.")
	}
	if s.Date != s.rawTime[:8] {
		return Key{}, ErrSignatureMismatch.New("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s', from '%s'.", clip(s.Date), s.rawTime[:8], dateSource(s))
	}
	if !contains(services, s.Service) {
		return Key{}, ErrSignatureMismatch.New("Credential should be scoped to correct service: '%s'. ", services[0])
	}
	if !validRegion(s.Region) {
		return Key{}, ErrSignatureMismatch.New("Credential should be scoped to a valid region, not '%s'. ", clip(s.Region))
	}
	if !contains(s.SignedHeaders, "host") {
		return Key{}, ErrSignatureMismatch.New("'Host' must be a 'SignedHeader' in the AWS Authorization.")
	}
	sum := sha256.Sum256(body)
	hashes := []string{hex.EncodeToString(sum[:])}
	if h := r.Header.Get("X-Amz-Content-Sha256"); h != "" && h != hashes[0] {
		if h != unsignedPayload {
			return Key{}, ErrSignatureMismatch.New("The provided 'x-amz-content-sha256' header does not match what was computed.")
		}
		hashes[0] = h
	}
	if s.Presigned {
		hashes = append(hashes, unsignedPayload)
	}
	signingKey := deriveKey(key.Secret, s.Date, s.Region, s.Service)
	for _, h := range hashes {
		want := hex.EncodeToString(hmacSHA256(signingKey, []byte(stringToSign(s, canonicalRequest(r, s, h)))))
		if hmac.Equal([]byte(want), []byte(s.Signature)) {
			return key, nil
		}
	}
	return Key{}, ErrSignatureMismatch.New("The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
}

// checkTime applies the 15-minute rule, and a presigned URL's expiry.
func checkTime(s *Signature, now time.Time) *awserr.Error {
	const f = amzDate
	if s.Time.After(now.Add(maxSkew)) {
		return ErrSignatureMismatch.New("Signature not yet current: %s is still later than %s (%s + 15 min.)", s.rawTime, now.Add(maxSkew).Format(f), now.Format(f))
	}
	if s.Presigned {
		if now.After(s.Time.Add(s.Expires)) {
			return ErrExpired.New("Request has expired: it was signed at %s for %d seconds; it is now %s.", s.rawTime, int(s.Expires/time.Second), now.Format(f))
		}
		return nil
	}
	if s.Time.Before(now.Add(-maxSkew)) {
		return ErrSignatureMismatch.New("Signature expired: %s is now earlier than %s (%s - 15 min.)", s.rawTime, now.Add(-maxSkew).Format(f), now.Format(f))
	}
	return nil
}

func dateSource(s *Signature) string {
	if s.Presigned {
		return "X-Amz-Date"
	}
	return "x-amz-date"
}

// validRegion accepts the shape of AWS region names (us-east-1, eu-central-2,
// us-gov-west-1, cn-north-1, ...): lower-case letters, digits and dashes.
func validRegion(r string) bool {
	if r == "" || len(r) > 32 {
		return false
	}
	for _, c := range r {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// canonicalRequest builds SigV4's canonical request of r as AWS services
// other than S3 do (the path escaped a second time).
func canonicalRequest(r *http.Request, s *Signature, payloadHash string) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	path, rawQuery, _ := strings.Cut(r.RequestURI, "?")
	if path == "" || !strings.HasPrefix(path, "/") {
		path = r.URL.EscapedPath()
		rawQuery = r.URL.RawQuery
	}
	if path == "" {
		path = "/"
	}
	b.WriteString(escape(path, false))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(rawQuery, s.Presigned))
	b.WriteByte('\n')
	for _, h := range s.SignedHeaders {
		b.WriteString(h)
		b.WriteByte(':')
		b.WriteString(headerValue(r, h))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(s.SignedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String()
}

func canonicalQuery(raw string, presigned bool) string {
	type kv struct{ k, v string }
	var pairs []kv
	for _, p := range strings.Split(raw, "&") {
		if p == "" {
			continue
		}
		k, v, _ := strings.Cut(p, "=")
		k, _ = url.QueryUnescape(k)
		v, _ = url.QueryUnescape(v)
		if presigned && k == "X-Amz-Signature" {
			continue
		}
		pairs = append(pairs, kv{escape(k, true), escape(v, true)})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// headerValue is a signed header's canonical value: values trimmed, inner
// runs of spaces collapsed, several values joined with commas.
func headerValue(r *http.Request, name string) string {
	switch name {
	case "host":
		return r.Host
	case "content-length":
		if v := r.Header.Get("Content-Length"); v != "" {
			return v
		}
		if r.ContentLength >= 0 {
			return strconv.FormatInt(r.ContentLength, 10)
		}
	case "transfer-encoding":
		return strings.Join(r.TransferEncoding, ",")
	}
	vals := r.Header.Values(name)
	for i, v := range vals {
		vals[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(vals, ",")
}

func stringToSign(s *Signature, canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return Algorithm + "\n" + s.rawTime + "\n" + s.Date + "/" + s.Region + "/" + s.Service + "/aws4_request\n" + hex.EncodeToString(sum[:])
}

func deriveKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), []byte(date))
	k = hmacSHA256(k, []byte(region))
	k = hmacSHA256(k, []byte(service))
	return hmacSHA256(k, []byte("aws4_request"))
}

func hmacSHA256(key, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return m.Sum(nil)
}

// escape percent-encodes everything but RFC 3986's unreserved characters
// (and '/', unless encodeSlash), upper-case hex, as SigV4 specifies.
func escape(s string, encodeSlash bool) string {
	const hexdig = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' && !encodeSlash {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexdig[c>>4])
		b.WriteByte(hexdig[c&15])
	}
	return b.String()
}
