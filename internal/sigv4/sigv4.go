// Package sigv4 reads and checks AWS Signature Version 4 on incoming
// requests: the Authorization header form and the presigned query-string form.
// Parse says whether a request is signed at all (fanout's browser rule);
// a Verifier checks the signature against known keys, as AWS does
// (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html).
package sigv4

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fanout/fanout/awserr"
)

// Algorithm is the only signing algorithm accepted.
const Algorithm = "AWS4-HMAC-SHA256"

// The errors of signature checking. Code is the JSON protocol's shape
// name, QueryCode what the Query protocol and x-amzn-query-error carry.
var (
	ErrMissing           = awserr.Kind{Code: "MissingAuthenticationTokenException", QueryCode: "MissingAuthenticationToken", Status: 403, Fault: awserr.Sender}
	ErrIncomplete        = awserr.Kind{Code: "IncompleteSignatureException", QueryCode: "IncompleteSignature", Status: 400, Fault: awserr.Sender}
	ErrUnknownKey        = awserr.Kind{Code: "UnrecognizedClientException", QueryCode: "InvalidClientTokenId", Status: 403, Fault: awserr.Sender}
	ErrSignatureMismatch = awserr.Kind{Code: "InvalidSignatureException", QueryCode: "SignatureDoesNotMatch", Status: 403, Fault: awserr.Sender}
	ErrExpired           = awserr.Kind{Code: "RequestExpired", QueryCode: "RequestExpired", Status: 400, Fault: awserr.Sender}
)

// MissingMessage is AWS's message for a request that carries no signature.
const MissingMessage = "Request is missing Authentication Token"

// Signature is what a request says about its signature.
type Signature struct {
	// Presigned is true for the query-string form (X-Amz-Signature in the URL).
	Presigned   bool
	AccessKeyID string
	// Scope is the credential scope: date (YYYYMMDD), region, service.
	Date, Region, Service string
	SignedHeaders         []string
	Signature             string
	// Time is X-Amz-Date (or the Date header); zero when absent.
	Time time.Time
	// Expires is X-Amz-Expires of a presigned request.
	Expires time.Duration
	// rawTime is the X-Amz-Date as sent, which the string to sign repeats.
	rawTime string
}

// Parse reads r's signature. It returns (nil, nil) for a request that carries
// none, and an ErrIncomplete error for one that carries a malformed one.
func Parse(r *http.Request) (*Signature, *awserr.Error) {
	if auth := r.Header.Get("Authorization"); auth != "" {
		return parseHeader(r, auth)
	}
	q := r.URL.Query()
	if q.Has("X-Amz-Signature") || q.Has("X-Amz-Credential") || q.Has("X-Amz-Algorithm") {
		return parseQuery(q.Get)
	}
	return nil, nil
}

func parseHeader(r *http.Request, auth string) (*Signature, *awserr.Error) {
	alg, rest, _ := strings.Cut(auth, " ")
	if alg != Algorithm {
		return nil, ErrIncomplete.New("Unsupported authorization type: only %s is accepted. Authorization=%s", Algorithm, clip(alg))
	}
	s := &Signature{}
	var missing []string
	// Every Query call is parsed, signed or not, so no map: the last of a
	// repeated parameter wins, as it would in one.
	var cred, sig, signed string
	var okCred, okSig, okSigned bool
	for more := true; more; {
		var p string
		p, rest, more = strings.Cut(rest, ",")
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok {
			continue
		}
		switch k {
		case "Credential":
			cred, okCred = v, true
		case "Signature":
			sig, okSig = v, true
		case "SignedHeaders":
			signed, okSigned = v, true
		}
	}
	if !okCred {
		missing = append(missing, "Authorization header requires 'Credential' parameter.")
	}
	if !okSig {
		missing = append(missing, "Authorization header requires 'Signature' parameter.")
	}
	if !okSigned {
		missing = append(missing, "Authorization header requires 'SignedHeaders' parameter.")
	}
	s.rawTime = r.Header.Get("X-Amz-Date")
	if s.rawTime != "" {
		t, err := time.Parse(amzDate, s.rawTime)
		if err != nil {
			return nil, ErrIncomplete.New("Date must be in ISO-8601 'basic format'. Got '%s'. See http://en.wikipedia.org/wiki/ISO_8601", clip(s.rawTime))
		}
		s.Time = t
	} else if d := r.Header.Get("Date"); d != "" {
		t, err := http.ParseTime(d)
		if err != nil {
			return nil, ErrIncomplete.New("Date must be in ISO-8601 'basic format'. Got '%s'. See http://en.wikipedia.org/wiki/ISO_8601", clip(d))
		}
		s.Time, s.rawTime = t.UTC(), t.UTC().Format(amzDate)
	} else {
		missing = append(missing, "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	if len(missing) > 0 {
		return nil, ErrIncomplete.New("%s Authorization=%s", strings.Join(missing, " "), clip(auth))
	}
	if e := s.setCredential(cred); e != nil {
		return nil, e
	}
	s.Signature = sig
	s.SignedHeaders = strings.Split(signed, ";")
	return s, nil
}

func parseQuery(get func(string) string) (*Signature, *awserr.Error) {
	var missing []string
	for _, k := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-SignedHeaders", "X-Amz-Date"} {
		if get(k) == "" {
			missing = append(missing, "AWS query-string parameters must include '"+k+"'.")
		}
	}
	if len(missing) > 0 {
		return nil, ErrIncomplete.New("%s Re-examine the query-string parameters.", strings.Join(missing, " "))
	}
	if alg := get("X-Amz-Algorithm"); alg != Algorithm {
		return nil, ErrIncomplete.New("Unsupported algorithm %s: only %s is accepted.", clip(alg), Algorithm)
	}
	s := &Signature{Presigned: true, Signature: get("X-Amz-Signature"), rawTime: get("X-Amz-Date")}
	t, err := time.Parse(amzDate, s.rawTime)
	if err != nil {
		return nil, ErrIncomplete.New("Date must be in ISO-8601 'basic format'. Got '%s'. See http://en.wikipedia.org/wiki/ISO_8601", clip(s.rawTime))
	}
	s.Time = t
	if e := get("X-Amz-Expires"); e != "" {
		n, err := strconv.Atoi(e)
		if err != nil || n < 0 || n > 604800 {
			return nil, ErrIncomplete.New("X-Amz-Expires must be a number of seconds from 0 to 604800 (a week); got %s.", clip(e))
		}
		s.Expires = time.Duration(n) * time.Second
	} else {
		s.Expires = maxSkew
	}
	if e := s.setCredential(get("X-Amz-Credential")); e != nil {
		return nil, e
	}
	s.SignedHeaders = strings.Split(get("X-Amz-SignedHeaders"), ";")
	return s, nil
}

// setCredential reads AKID/date/region/service/aws4_request.
func (s *Signature) setCredential(cred string) *awserr.Error {
	var parts [5]string
	n, rest := 0, cred
	for ; n < len(parts) && rest != ""; n++ {
		parts[n], rest, _ = strings.Cut(rest, "/")
	}
	if n != 5 || rest != "" || strings.HasSuffix(cred, "/") || parts[0] == "" || parts[4] != "aws4_request" || len(parts[1]) != 8 {
		return ErrIncomplete.New("Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '%s'", clip(cred))
	}
	s.AccessKeyID, s.Date, s.Region, s.Service = parts[0], parts[1], parts[2], parts[3]
	return nil
}

const amzDate = "20060102T150405Z"

// clip bounds what an error message repeats of the request.
func clip(s string) string {
	if len(s) > 256 {
		return s[:256] + "..."
	}
	return s
}
