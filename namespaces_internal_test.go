package fanout

import (
	"fmt"
	"testing"
)

// BenchmarkNamespaceLookup is what choosing a namespace adds to a call:
// the default one (no lock while it is the only one), and one of 100.
func BenchmarkNamespaceLookup(b *testing.B) {
	s, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.closeEngines()
	b.Run("default-only", func(b *testing.B) {
		for range b.N {
			if s.ns.lookup("000000000000", "us-east-1") == nil {
				b.Fatal("no default")
			}
		}
	})
	accounts := make([]string, 100)
	for i := range accounts {
		accounts[i] = fmt.Sprintf("%012d", 100000000000+i)
		s.ns.get(accounts[i], "us-east-1")
	}
	b.Run("one-of-100", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if s.ns.lookup(accounts[i%100], "us-east-1") == nil {
					b.Fatal("missing")
				}
				i++
			}
		})
	})
}

func TestSplitArn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		arn, service              string
		region, account, resource string
		ok                        bool
	}{
		{"arn:aws:sqs:us-east-1:000000000000:q", "sqs", "us-east-1", "000000000000", "q", true},
		{"arn:aws:sns:eu-west-1:111111111111:t:sub-id", "sns", "eu-west-1", "111111111111", "t:sub-id", true},
		{"arn:aws:sns:eu-west-1:111111111111:", "sns", "eu-west-1", "111111111111", "", true},
		{"arn:aws:sqs:us-east-1:000000000000:q", "sns", "", "", "", false},
		{"arn:aws:sqs:us-east-1:000000000000", "sqs", "", "", "", false},
		{"nra:aws:sqs:us-east-1:000000000000:q", "sqs", "", "", "", false},
		{"", "sqs", "", "", "", false},
	} {
		region, account, resource, ok := splitArn(c.arn, c.service)
		if region != c.region || account != c.account || resource != c.resource || ok != c.ok {
			t.Errorf("splitArn(%q, %q) = %q %q %q %v", c.arn, c.service, region, account, resource, ok)
		}
	}
}
