package delivery

import (
	"time"

	"github.com/fanout/fanout/filter"
	"github.com/fanout/fanout/sqs"
)

// Fan is one message's deliveries to the subscriptions of one publish,
// made in order on the publisher's goroutine. What a delivery to a queue
// that succeeds, or a subscription's filter policy that refuses the
// message, leaves behind (a count and a record, on one clock reading for
// the whole fan) is kept back and written with the others of the fan,
// under one lock each instead of one per subscription: with ten queues
// those dispatcher-wide locks were taken ten times a publish, by every
// publisher, and with 200 filtered subscriptions 200 times.
// Anything else the fan records (a filtered-out message, a failed send, a
// job) first writes what it holds, so the records keep the order the
// subscriptions were tried in. Close writes the rest; the counts and
// records are there when Close returns, as they are after each Deliver.
type Fan struct {
	d     *Dispatcher
	m     *Message
	now   time.Time
	dated bool
	n     int
	held  [fanHeld]fanDelivery
	// pinned is m in the journal, held there from the fan's first
	// journaled job to Close.
	pinned *journaledMessage
	// share is m's body, stored once for the queues of raw subscriptions
	// when the fan has more than one subscription (Targets).
	share           *sqs.SharedBody
	sharing, shared bool // share is in use (Targets), and made
}

// fanHeld is how many deliveries a fan holds back before it writes them.
const fanHeld = 10

type fanDelivery struct {
	sub Subscriber
	gen uint64 // the dispatcher's generation when it was made
	// policy is set on a message the subscription's filter policy
	// refused, with the attributes it was matched against.
	policy *filter.Policy
	attrs  map[string]filter.Attribute
}

// Fan starts the deliveries of m; call Close when they are made.
func (d *Dispatcher) Fan(m *Message) Fan { return Fan{d: d, m: m} }

// Deliver is DeliverJournaled, within the fan.
func (f *Fan) Deliver(sub Subscriber) (Waiter, error) {
	return f.d.deliverJournaled(f.m, sub, f)
}

// Filtered is the dispatcher's Filtered, within the fan: its count and
// record are held back with the fan's deliveries to queues, on the fan's
// clock reading. A record whose explanation needs more than the records
// keep (a body-scope policy matched against a body past the records' cap,
// or a protocol's own body) is made whole at once, as Filtered makes it.
func (f *Fan) Filtered(sub Subscriber, p *filter.Policy, fm filter.Message) {
	if explainedNow(p, fm, f.m, f.d.kept(f.m)) {
		f.flush()
		f.d.Filtered(f.m, sub, p, fm)
		return
	}
	f.time()
	f.hold(fanDelivery{sub: sub, gen: f.d.generation.Load(), policy: p, attrs: fm.Attributes})
}

// Targets tells the fan how many subscriptions it will deliver to. With two
// or more, the queues of raw subscriptions share one copy of the body.
func (f *Fan) Targets(n int) { f.sharing = n > 1 }

// sharedBody is the body the fan's queues share, or nil.
func (f *Fan) sharedBody() *sqs.SharedBody {
	if f.sharing && !f.shared {
		f.share, f.shared = sqs.ShareBody(f.m.Body), true // nil for a short body
	}
	return f.share
}

// Close writes the counts and records the fan holds, and lets the journal
// forget the message once no job delivers it.
func (f *Fan) Close() {
	if f.share != nil {
		f.share.Release() // the queues that took it hold their own references
		f.share = nil
	}
	f.flush()
	if f.pinned != nil {
		f.d.unpin(f.pinned)
		f.pinned = nil
	}
}

// time is the fan's clock reading, taken at its first delivery to a queue.
func (f *Fan) time() time.Time {
	if !f.dated {
		f.now, f.dated = f.d.clock.Now(), true
	}
	return f.now
}

// add holds back the count and record of a delivery made in generation gen.
func (f *Fan) add(sub Subscriber, gen uint64) { f.hold(fanDelivery{sub: sub, gen: gen}) }

func (f *Fan) hold(fd fanDelivery) {
	if f.n == len(f.held) {
		f.flush()
	}
	f.held[f.n] = fd
	f.n++
}

// flush counts and records what the fan holds, but for deliveries made
// before a Reset since (a Reset forgets them, as it forgets the others).
func (f *Fan) flush() {
	if f.n == 0 {
		return
	}
	d := f.d
	held := f.held[:f.n]
	var counts [fanHeld]*SubscriptionCounts
	s := &d.stats
	s.mu.Lock()
	for i := range held {
		if held[i].gen != d.generation.Load() {
			continue
		}
		if held[i].policy != nil {
			counts[i] = s.filteredLocked(held[i].sub)
		} else {
			counts[i] = s.deliveredLocked(held[i].sub)
		}
	}
	s.mu.Unlock()
	k := d.kept(f.m)
	rs := d.records
	rs.mu.Lock()
	for i := range held {
		if counts[i] != nil && held[i].gen == d.generation.Load() { // Reset replaces the ring under mu
			rs.push(slot{k: k, sub: counts[i], at: f.now, policy: held[i].policy, attrs: held[i].attrs})
		}
	}
	rs.mu.Unlock()
	clear(held)
	f.n = 0
}
