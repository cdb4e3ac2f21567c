package awswire

import "net/http"

// CallNoter is implemented by the response writer of fanout's request log:
// the handlers tell it what a call was about, which only they know once
// they have decoded it. Without the log the writer is not a CallNoter and
// noting costs one type assertion.
type CallNoter interface {
	// NoteCall records the service, the action and the queue or topic.
	NoteCall(service, action, resource string)
	// NoteError records the AWS error code a reply carries.
	NoteError(code string)
}

// NoteCall tells w's request log, if any, what the call is.
func NoteCall(w http.ResponseWriter, service, action, resource string) {
	if n, ok := w.(CallNoter); ok {
		n.NoteCall(service, action, resource)
	}
}

// Noting reports whether w keeps a request log, so that a handler only
// works out a call's resource when it will be logged.
func Noting(w http.ResponseWriter) bool {
	_, ok := w.(CallNoter)
	return ok
}

// NoteError tells w's request log, if any, the error code of the reply.
func NoteError(w http.ResponseWriter, code string) {
	if n, ok := w.(CallNoter); ok {
		n.NoteError(code)
	}
}
