package fanouttest

import (
	"time"

	"github.com/fanout/fanout/sqs"
)

// Peek returns the messages of a queue (a name or a queue URL) in the given
// states, every state by default, without consuming them: no receive count,
// no visibility change, no dead-letter move. Visible messages come first,
// oldest first, then in-flight ones, then delayed ones; at most
// sqs.MaxPeekLimit. It fails the test if the queue does not exist.
func (s *Server) Peek(queue string, states ...sqs.MessageState) []sqs.PeekedMessage {
	s.t.Helper()
	msgs, err := s.peek(queue, states)
	if err != nil {
		s.t.Fatalf("fanouttest: peek %s: %v", queue, err)
	}
	return msgs
}

func (s *Server) peek(queue string, states []sqs.MessageState) ([]sqs.PeekedMessage, error) {
	engine, name := s.queueEngine(queue)
	r, err := engine.Peek(name, sqs.PeekOptions{States: states, Limit: sqs.MaxPeekLimit})
	return r.Messages, err
}

// Messages returns the visible messages of a queue, or none if it does not
// exist: a function for gomega's Eventually,
//
//	Eventually(srv.Messages("orders")).Should(HaveLen(3))
func (s *Server) Messages(queue string) func() []sqs.PeekedMessage {
	return func() []sqs.PeekedMessage {
		s.Settle()
		msgs, _ := s.peek(queue, []sqs.MessageState{sqs.MessageVisible})
		return msgs
	}
}

// HasMessages reports whether a queue holds at least n visible messages: a
// condition for testify's Eventually,
//
//	assert.Eventually(t, srv.HasMessages("orders", 3), time.Second, time.Millisecond)
func (s *Server) HasMessages(queue string, n int) func() bool {
	msgs := s.Messages(queue)
	return func() bool { return len(msgs()) >= n }
}

// WaitForMessages waits up to timeout (real time: deliveries to SQS that
// come through HTTP or Lambda endpoints take some) until a queue holds at
// least n visible messages, and returns them without consuming them. It
// fails the test when they do not come.
func (s *Server) WaitForMessages(queue string, n int, timeout time.Duration) []sqs.PeekedMessage {
	t := s.t
	t.Helper()
	msgs := s.Messages(queue)
	deadline := time.Now().Add(timeout)
	for {
		got := msgs()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			if _, err := s.peek(queue, nil); err != nil {
				t.Fatalf("fanouttest: waiting for %d messages in %s: %v", n, queue, err)
				return nil
			}
			t.Fatalf("fanouttest: %s holds %d visible messages after %v, want %d", queue, len(got), timeout, n)
			return got
		}
		time.Sleep(time.Millisecond)
	}
}
