package delivery

import "sync"

// lambdas are the Lambda hooks by function name: Options.Lambda, and those
// SetLambda adds while the dispatcher runs (a test registering a Go function).
type lambdas struct {
	mu    sync.RWMutex
	hooks map[string]string
}

func (l *lambdas) url(name string) (string, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	u, ok := l.hooks[name]
	return u, ok
}

// SetLambda makes deliveries to the Lambda function name go to the hook at
// url (see Options.Lambda); an empty url removes the function.
func (d *Dispatcher) SetLambda(name, url string) {
	l := &d.lambdas
	l.mu.Lock()
	defer l.mu.Unlock()
	if url == "" {
		delete(l.hooks, name)
		return
	}
	if l.hooks == nil {
		l.hooks = map[string]string{}
	}
	l.hooks[name] = url
}
