package durable

import (
	"strings"

	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/sqs"
)

// sqsRestorer returns the Restorer of namespace account/region (views of a
// key), made at its first key. The latest one is kept aside: a store hands
// a namespace's keys back one after another, and its name need not be
// hashed again for each.
func (r *Recovered) sqsRestorer(account, region string) *sqs.Restorer {
	if r.lastRes != nil && r.lastSQS.Account == account && r.lastSQS.Region == region {
		return r.lastRes
	}
	res := r.sqs[Namespace{account, region}]
	ns := Namespace{strings.Clone(account), strings.Clone(region)} // kept past the key
	if res == nil {
		res = sqs.NewRestorer()
		// A raw delivery's body was one copy for all the queues of its
		// publish; the store keeps one per queue.
		res.ShareBodiesOf(delivery.SenderID)
		r.sqs[ns] = res
	}
	r.lastSQS, r.lastRes = ns, res
	return res
}
