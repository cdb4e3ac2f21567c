package awswire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"sync"

	"github.com/fanout/fanout/awserr"
)

// Content types of the two protocols.
const (
	ContentJSON10 = "application/x-amz-json-1.0"
	ContentXML    = "text/xml"
)

// RequestIDHeader carries the request id on every reply.
const RequestIDHeader = "x-amzn-RequestId"

// requestIDKey is RequestIDHeader in the form http.Header keeps it, so
// that setting it per reply does not canonicalize (and copy) the name.
var requestIDKey = textproto.CanonicalMIMEHeaderKey(RequestIDHeader)

var contentJSON10Value = []string{ContentJSON10}

// WriteJSON writes a 200 AWS JSON 1.0 reply of v (encoding/json, with HTML
// escaping off as AWS does).
func WriteJSON(w http.ResponseWriter, requestID string, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		WriteJSONError(w, requestID, "com.amazonaws.sqs", awserr.Internal.New("failed to encode the reply"))
		return
	}
	b := bytes.TrimRight(buf.Bytes(), "\n")
	WriteJSONBytes(w, requestID, b)
}

// WriteJSONBytes writes an already encoded 200 AWS JSON 1.0 reply.
func WriteJSONBytes(w http.ResponseWriter, requestID string, b []byte) {
	h := w.Header()
	// One allocation for the two values that differ per reply; the content
	// type's is shared (net/http only reads it).
	vals := [...]string{requestID, strconv.Itoa(len(b))}
	h["Content-Type"] = contentJSON10Value
	h[requestIDKey] = vals[0:1:1]
	h["Content-Length"] = vals[1:2:2]
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// WriteJSONError renders e in the AWS JSON 1.0 shape for a query-compatible
// service: __type with the service namespace, message, and the
// x-amzn-query-error header that SDKs read the code from first.
func WriteJSONError(w http.ResponseWriter, requestID, namespace string, e *awserr.Error) {
	body := struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}{namespace + "#" + e.Code, e.MessageFor(false)}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body)
	b := bytes.TrimRight(buf.Bytes(), "\n")
	h := w.Header()
	h.Set("Content-Type", ContentJSON10)
	h.Set(RequestIDHeader, requestID)
	h.Set("x-amzn-query-error", e.QueryCodeOrCode()+";"+string(e.FaultOrSender()))
	NoteError(w, e.Code)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.StatusFor(false))
	_, _ = w.Write(b)
}

// WriteXML writes a 200 Query-protocol reply.
func WriteXML(w http.ResponseWriter, requestID string, b []byte) {
	h := w.Header()
	h.Set("Content-Type", ContentXML)
	h[requestIDKey] = []string{requestID}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// WriteXMLError renders e as a Query-protocol ErrorResponse in namespace ns.
func WriteXMLError(w http.ResponseWriter, requestID, ns string, e *awserr.Error) {
	var x XMLWriter
	x.Header()
	x.OpenNS("ErrorResponse", ns)
	x.Open("Error")
	x.Elem("Type", string(e.FaultOrSender()))
	x.Elem("Code", e.QueryCodeOrCode())
	x.Elem("Message", e.MessageFor(true))
	x.Empty("Detail")
	x.Close("Error")
	x.Elem("RequestId", requestID)
	x.Close("ErrorResponse")
	h := w.Header()
	h.Set("Content-Type", ContentXML)
	h.Set(RequestIDHeader, requestID)
	h.Set("Content-Length", strconv.Itoa(len(x.Buf)))
	NoteError(w, e.QueryCodeOrCode())
	w.WriteHeader(e.StatusFor(true))
	_, _ = w.Write(x.Buf)
}

// QueryResponse writes the envelope of a successful Query reply around body:
// <OpResponse xmlns=ns><OpResult>body</OpResult><ResponseMetadata>...</...>.
// A nil body writes no Result element, as AWS does for actions without output.
func QueryResponse(op, ns, requestID string, body func(*XMLWriter)) []byte {
	x := XMLWriter{Buf: make([]byte, 0, 512)}
	x.queryResponse(op, ns, requestID, body)
	return x.Buf
}

func (x *XMLWriter) queryResponse(op, ns, requestID string, body func(*XMLWriter)) {
	x.Header()
	x.OpenNS(op+"Response", ns)
	if body != nil {
		x.Open(op + "Result")
		body(x)
		x.Close(op + "Result")
	}
	x.Open("ResponseMetadata")
	x.Elem("RequestId", requestID)
	x.Close("ResponseMetadata")
	x.Close(op + "Response")
}

// WriteQueryResponse writes a 200 Query reply (QueryResponse) from a
// pooled buffer.
func WriteQueryResponse(w http.ResponseWriter, op, ns, requestID string, body func(*XMLWriter)) {
	x := xmlWriters.Get().(*XMLWriter)
	x.Buf = x.Buf[:0]
	x.queryResponse(op, ns, requestID, body)
	WriteXML(w, requestID, x.Buf)
	if cap(x.Buf) <= maxPooledReply {
		xmlWriters.Put(x)
	}
}

var xmlWriters = sync.Pool{New: func() any { return &XMLWriter{Buf: make([]byte, 0, 2048)} }}

// maxPooledReply is the largest reply buffer kept for reuse: a rare large
// reply should not pin megabytes in the pool.
const maxPooledReply = 64 << 10

// WriteTooLarge refuses a request body longer than limit as AWS's front end
// does, before any protocol is involved: 413 with a plain-text reason.
func WriteTooLarge(w http.ResponseWriter, limit int) {
	b := []byte("HTTP content length exceeded " + strconv.Itoa(limit) + " bytes.")
	h := w.Header()
	h.Set("Content-Type", "text/plain")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Connection", "close") // the rest of the body is not read
	w.WriteHeader(http.StatusRequestEntityTooLarge)
	_, _ = w.Write(b)
}

// ErrTooLarge is a request body longer than ReadBody's limit.
var ErrTooLarge = errors.New("request body too large")

// ReadBody reads a request body of at most limit bytes into a buffer of its
// own, which callers may point strings into (it is never written again).
// The buffer grows with what arrives, never from what Content-Length claims
// beyond 64 KiB, and a body past limit is ErrTooLarge rather than cut short.
func ReadBody(r *http.Request, limit int) ([]byte, error) {
	if r.ContentLength > int64(limit) {
		return nil, ErrTooLarge
	}
	n := 512
	if r.ContentLength > 0 {
		n = int(min(r.ContentLength+1, 64<<10)) // +1: reading EOF needs no second buffer
	}
	b := make([]byte, 0, n)
	lr := io.LimitReader(r.Body, int64(limit)+1)
	for {
		if len(b) == cap(b) { // double: a body costs at most twice its size
			nb := make([]byte, len(b), 2*cap(b))
			copy(nb, b)
			b = nb
		}
		n, err := lr.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(b) > limit {
		return nil, ErrTooLarge
	}
	return b, nil
}
