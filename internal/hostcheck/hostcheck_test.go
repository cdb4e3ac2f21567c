package hostcheck

import "testing"

func TestAllowed(t *testing.T) {
	t.Parallel()
	loop := New("127.0.0.1", nil)
	open := New("0.0.0.0", []string{"fanout", "*.corp.example", ".ci.example"})
	cases := []struct {
		host       string
		loop, open bool
	}{
		{"localhost:4566", true, true},
		{"LOCALHOST", true, true},
		{"localhost.:4566", true, true},
		{"sqs.localhost:4566", true, true},
		{"127.0.0.1:4566", true, true},
		{"127.8.9.10", true, true},
		{"[::1]:4566", true, true},
		{"localhost.localstack.cloud:4566", true, true},
		{"sqs.us-east-1.localhost.localstack.cloud:4566", true, true},
		{"", true, true},
		// DNS rebinding: a name the attacker controls.
		{"evil.example:4566", false, false},
		{"localhost.evil.example", false, false},
		{"evillocalhost", false, false},
		{"localstack.cloud", false, false},
		// Other IPs: not loopback, but never a rebinding.
		{"192.168.1.20:4566", false, true},
		{"[fe80::1]:4566", false, true},
		// --allowed-hosts.
		{"fanout:4566", false, true},
		{"sqs.corp.example", false, true},
		{"corp.example", false, false},
		{"a.ci.example", false, true},
	}
	for _, c := range cases {
		if got := loop.Allowed(c.host); got != c.loop {
			t.Errorf("loopback bind, Host %q: %v, want %v", c.host, got, c.loop)
		}
		if got := open.Allowed(c.host); got != c.open {
			t.Errorf("0.0.0.0 bind, Host %q: %v, want %v", c.host, got, c.open)
		}
	}
	if !New("127.0.0.1", []string{"*"}).Allowed("anything.example") {
		t.Error(`"*" allows every host`)
	}
	if !IsLoopback("localhost") || !IsLoopback("::1") || !IsLoopback("127.0.0.2") || IsLoopback("0.0.0.0") || IsLoopback("") || IsLoopback("10.0.0.1") {
		t.Error("IsLoopback")
	}
}

// The last accepted Host is remembered; a different one is still checked.
func TestAllowedRemembersOnlyAccepted(t *testing.T) {
	t.Parallel()
	c := New("127.0.0.1", nil)
	for i := 0; i < 2; i++ {
		if !c.Allowed("localhost:4566") {
			t.Fatal("localhost refused")
		}
		if c.Allowed("evil.example:4566") {
			t.Fatal("evil.example accepted")
		}
	}
	if !c.Allowed("127.0.0.1:4566") || c.Allowed("evil.example") {
		t.Fatal("cache confused")
	}
}
