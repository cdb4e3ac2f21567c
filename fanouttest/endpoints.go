package fanouttest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
)

// HTTPEndpoint starts an HTTP server for handler and returns its URL, to
// subscribe with protocol "http". The helper confirms the subscription
// itself (it visits the SubscribeURL of the SubscriptionConfirmation), so
// handler gets only notifications; call Settle after Subscribe before
// publishing, since the confirmation is delivered in the background. The
// endpoint stops when t ends (t may be nil: then with the server).
func (s *Server) HTTPEndpoint(t TB, handler http.Handler) string {
	h := s.endpoint(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("x-amz-sns-message-type") {
		case "SubscriptionConfirmation":
			s.confirm(w, r)
			return
		case "UnsubscribeConfirmation":
			return // nothing to do: the subscription is gone
		}
		handler.ServeHTTP(w, r)
	}))
	return h.URL
}

// confirm visits the SubscribeURL of a confirmation, as a subscriber does.
func (s *Server) confirm(w http.ResponseWriter, r *http.Request) {
	var c struct{ SubscribeURL string }
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil || !strings.HasPrefix(c.SubscribeURL, s.URL()+"/") {
		http.Error(w, "not a confirmation from this fanout", http.StatusBadRequest)
		return
	}
	resp, err := HTTPClient().Get(c.SubscribeURL)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		http.Error(w, "confirming: "+resp.Status, http.StatusBadGateway)
	}
}

func (s *Server) endpoint(t TB, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	s.mu.Lock()
	s.servers = append(s.servers, srv)
	s.mu.Unlock()
	if t != nil {
		t.Cleanup(srv.Close)
	}
	return srv
}

// SNSEvent is the event SNS hands a Lambda function: the JSON of
// aws-lambda-go's events.SNSEvent, which a function may decode instead.
type SNSEvent struct {
	Records []SNSEventRecord `json:"Records"`
}

// SNSEventRecord is one message of an SNSEvent.
type SNSEventRecord struct {
	EventSource          string    `json:"EventSource"`
	EventVersion         string    `json:"EventVersion"`
	EventSubscriptionArn string    `json:"EventSubscriptionArn"`
	SNS                  SNSEntity `json:"Sns"`
}

// SNSEntity is the message itself. Note AWS's spelling SigningCertUrl and
// UnsubscribeUrl here, unlike the HTTP envelope's.
type SNSEntity struct {
	Type              string                  `json:"Type"`
	MessageID         string                  `json:"MessageId"`
	TopicArn          string                  `json:"TopicArn"`
	Subject           string                  `json:"Subject"`
	Message           string                  `json:"Message"`
	Timestamp         string                  `json:"Timestamp"`
	SignatureVersion  string                  `json:"SignatureVersion"`
	Signature         string                  `json:"Signature"`
	SigningCertURL    string                  `json:"SigningCertUrl"`
	UnsubscribeURL    string                  `json:"UnsubscribeUrl"`
	MessageAttributes map[string]SNSAttribute `json:"MessageAttributes"`
}

// SNSAttribute is a message attribute as Lambda gets it.
type SNSAttribute struct {
	Type  string `json:"Type"`
	Value string `json:"Value"`
}

// LambdaFunction makes fn the Lambda function called name, and returns its
// ARN, to subscribe with protocol "lambda". SNS invokes it as Lambda would:
// an error fn returns is a function error, retried on SNS's Lambda schedule
// (Advance runs the retries), then dead-lettered or dropped. The function
// is removed when t ends (t may be nil: then with the server).
func (s *Server) LambdaFunction(t TB, name string, fn func(ctx context.Context, event SNSEvent) error) string {
	h := s.endpoint(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev SNSEvent
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err := fn(r.Context(), ev); err != nil {
			// Lambda's answer for a function that failed: 200, with the
			// error in a header and the body.
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			_ = json.NewEncoder(w).Encode(map[string]string{"errorMessage": err.Error(), "errorType": "error"})
			return
		}
		_, _ = w.Write([]byte("null"))
	}))
	d := s.srv.Deliveries()
	d.SetLambda(name, h.URL)
	if t != nil {
		t.Cleanup(func() { d.SetLambda(name, "") })
	}
	return "arn:aws:lambda:" + s.Region() + ":" + s.Account() + ":function:" + name
}
