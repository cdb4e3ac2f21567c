package crashtest

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// hook is the HTTP subscription's endpoint. It fails the first zero, one or
// two attempts of each message (by a hash of its MessageId), so that retries
// are pending when fanout is killed, and records what it was delivered.
type hook struct {
	srv       *httptest.Server
	mu        sync.Mutex
	attempts  map[string]int
	delivered map[string]bool
	confirmed chan struct{}
	once      sync.Once
}

func newHook(t *testing.T) *hook {
	h := &hook{attempts: map[string]int{}, delivered: map[string]bool{}, confirmed: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func failures(id string) int {
	f := fnv.New32a()
	f.Write([]byte(id))
	return int(f.Sum32() % 3)
}

func (h *hook) serve(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var m struct{ Type, MessageId, SubscribeURL string }
	if err := json.Unmarshal(b, &m); err != nil {
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	switch m.Type {
	case "SubscriptionConfirmation":
		resp, err := http.Get(m.SubscribeURL)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			h.once.Do(func() { close(h.confirmed) })
		}
	case "Notification":
		h.mu.Lock()
		h.attempts[m.MessageId]++
		fail := h.attempts[m.MessageId] <= failures(m.MessageId)
		if !fail {
			h.delivered[m.MessageId] = true
		}
		h.mu.Unlock()
		if fail {
			http.Error(w, "failing on purpose", http.StatusInternalServerError)
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

func (h *hook) wasDelivered(id string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.delivered[id]
}

func (h *hook) counts() (messages, attempts int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range h.attempts {
		attempts += n
	}
	return len(h.delivered), attempts
}
