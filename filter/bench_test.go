package filter

import (
	"fmt"
	"testing"
)

const (
	benchSmallPolicy = `{"store":["example_corp"]}`
	// benchLargePolicy uses every operator, five keys and a $or.
	benchLargePolicy = `{
		"store":["example_corp","other_corp",{"prefix":"corp-"},{"suffix":"-corp"}],
		"event":[{"anything-but":["order_cancelled","order_returned"]},{"anything-but":{"prefix":"test-"}}],
		"price_usd":[{"numeric":[">=",100,"<",500]},{"numeric":["=",1000]},42],
		"$or":[
			{"customer_interests":["rugby","football",{"equals-ignore-case":"BaseBall"}]},
			{"source_ip":[{"cidr":"10.0.0.0/8"},{"cidr":"2001:db8::/32"}],"vip":[{"exists":true}]}
		]
	}`
)

var (
	benchSmallMessage = Message{Attributes: map[string]Attribute{
		"store": str("example_corp"),
	}}
	benchLargeMessage = Message{Attributes: map[string]Attribute{
		"store":              str("corp-west"),
		"event":              str("order_placed"),
		"price_usd":          num("420.5"),
		"customer_interests": arr(`["golf","tennis","baseball"]`),
		"source_ip":          str("10.20.30.40"),
		"vip":                str("yes"),
		"unrelated":          str("x"),
	}}
	benchBodyMessage = Message{Body: `{"store":"example_corp","event":"order_placed","price_usd":420.5,"customer_interests":["golf","tennis","baseball"],"source_ip":"10.20.30.40","vip":"yes","detail":{"items":[{"sku":"a","qty":1},{"sku":"b","qty":2}]}}`}
)

func BenchmarkCompile(b *testing.B) {
	for _, bc := range []struct{ name, policy string }{
		{"small", benchSmallPolicy},
		{"large", benchLargePolicy},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Compile(bc.policy, ScopeAttributes); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMatch(b *testing.B) {
	for _, bc := range []struct {
		name   string
		scope  Scope
		policy string
		msg    Message
	}{
		{"small/attributes", ScopeAttributes, benchSmallPolicy, benchSmallMessage},
		{"large/attributes", ScopeAttributes, benchLargePolicy, benchLargeMessage},
		{"small/body", ScopeBody, benchSmallPolicy, benchBodyMessage},
		{"large/body", ScopeBody, benchLargePolicy, benchBodyMessage},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := MustCompile(bc.policy, bc.scope)
			if !p.Match(bc.msg) {
				b.Fatal("benchmark message does not match")
			}
			b.ReportAllocs()
			for b.Loop() {
				p.Match(bc.msg)
			}
		})
	}
}

// subscriptionPolicies builds n five-key policies of the kind a topic's
// subscribers set: some match the benchmark message, most fail on one of
// their keys.
func subscriptionPolicies(n int, scope Scope) []*Policy {
	ps := make([]*Policy, n)
	for i := range ps {
		region := []string{`"eu-west-1","eu-central-1"`, `"us-east-1"`, `{"prefix":"ap-"}`}[i%3]
		ps[i] = MustCompile(fmt.Sprintf(`{
			"tenant":["tenant-%d","tenant-shared"],
			"event":[{"prefix":"order."},{"anything-but":["order.test"]}],
			"priority":[{"numeric":[">=",%d]}],
			"region":[%s],
			"channel":[{"exists":true}]
		}`, i%40, i%10, region), scope)
	}
	return ps
}

// BenchmarkMatch200Subscriptions matches one message against 200
// subscriptions' five-key policies, as Publish does for a busy topic.
func BenchmarkMatch200Subscriptions(b *testing.B) {
	msg := Message{Attributes: map[string]Attribute{
		"tenant":   str("tenant-shared"),
		"event":    str("order.created"),
		"priority": num("5"),
		"region":   str("eu-west-1"),
		"channel":  str("email"),
		"trace":    str("abc"),
	}}
	body := Message{Body: `{"tenant":"tenant-shared","event":"order.created","priority":5,"region":"eu-west-1","channel":"email","trace":"abc"}`}
	for _, bc := range []struct {
		name  string
		scope Scope
		msg   Message
	}{
		{"attributes", ScopeAttributes, msg},
		{"body", ScopeBody, body},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ps := subscriptionPolicies(200, bc.scope)
			matched := 0
			for _, p := range ps {
				if p.Match(bc.msg) {
					matched++
				}
			}
			if matched == 0 || matched == len(ps) {
				b.Fatalf("%d of %d policies match; want a mix", matched, len(ps))
			}
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range ps {
					p.Match(bc.msg)
				}
			}
		})
	}
}

// TestAttributeMatchDoesNotAllocate pins down the zero-allocation promise
// of attribute-scope matching. It is deliberately not parallel:
// AllocsPerRun counts the whole process's allocations.
func TestAttributeMatchDoesNotAllocate(t *testing.T) {
	p := MustCompile(benchLargePolicy, ScopeAttributes)
	ps := subscriptionPolicies(20, ScopeAttributes)
	msg := benchLargeMessage
	allocs := testing.AllocsPerRun(200, func() {
		p.Match(msg)
		for _, q := range ps {
			q.Match(msg)
		}
	})
	if allocs != 0 {
		t.Fatalf("Match allocates %v times per run", allocs)
	}
}
