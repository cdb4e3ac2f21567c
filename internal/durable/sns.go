package durable

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/fanout/fanout/internal/persist"
	"github.com/fanout/fanout/sns"
	"github.com/fanout/fanout/sqs"
)

// Namespace is one account and region: one pair of engines.
type Namespace struct{ Account, Region string }

func snsPrefix(ns Namespace) string { return "sns/" + ns.Account + "/" + ns.Region + "/" }

// SNSJournal is the sns.Journal of the engine of ns, writing to st.
func SNSJournal(st persist.Store, ns Namespace) sns.Journal {
	return snsJournal{storeJournal{st: st, prefix: snsPrefix(ns)}}
}

type snsJournal struct{ storeJournal }

// Record implements sns.Journal: the Change is one batch.
func (j snsJournal) Record(c sns.Change) sns.Waiter { return j.enqueue(snsRecords(j.prefix, c)) }

func topicKey(prefix, name string) string { return prefix + "topic/" + name }

func subID(arn string) string { return arn[strings.LastIndexByte(arn, ':')+1:] }

// snsRecords encodes c, deletions first (as sns.Change says).
func snsRecords(prefix string, c sns.Change) ([]persist.Record, error) {
	var recs []persist.Record
	del := func(k string) { recs = append(recs, persist.Delete([]byte(k))) }
	var err error
	put := func(k string, v any) {
		b, e := encode(v)
		if e != nil && err == nil {
			err = e
		}
		recs = append(recs, persist.Put([]byte(k), b))
	}
	if c.Reset {
		recs = append(recs, persist.DeletePrefix([]byte(prefix)))
	}
	for _, n := range c.DeletedTopics {
		k := topicKey(prefix, n)
		del(k)
		recs = append(recs, persist.DeletePrefix([]byte(k+"/")))
	}
	for _, s := range c.Unsubscribed {
		del(topicKey(prefix, s.Topic) + "/sub/" + subID(s.Arn))
	}
	for _, d := range c.ForgottenDedup {
		del(topicKey(prefix, d.Topic) + "/dedup/" + d.Key)
	}
	for _, a := range c.Unarchived {
		del(topicKey(prefix, a.Topic) + "/archive/" + a.SequenceNumber)
	}
	for _, t := range c.Topics {
		put(topicKey(prefix, t.Name), t)
	}
	for _, s := range c.Subscriptions {
		put(topicKey(prefix, s.Topic)+"/sub/"+subID(s.Arn), s)
	}
	for _, q := range c.Sequences {
		put(topicKey(prefix, q.Topic)+"/seq", q)
	}
	for _, d := range c.Dedup {
		put(topicKey(prefix, d.Topic)+"/dedup/"+d.Key, d)
	}
	for _, a := range c.Archived {
		put(topicKey(prefix, a.Topic)+"/archive/"+a.SequenceNumber, a)
	}
	return recs, err
}

func encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append([]byte{formatV1}, b...), nil
}

func decode(key, value []byte, v any) error {
	if len(value) == 0 || value[0] != formatV1 {
		return formatError(key, "not format 1")
	}
	if err := json.Unmarshal(value[1:], v); err != nil {
		return formatError(key, err.Error())
	}
	return nil
}

// EmitSNS writes the live state of engine e of ns through emit: the part of
// a persist.Snapshotter for one SNS namespace.
func EmitSNS(e *sns.Engine, ns Namespace, emit func(key, value []byte) error) error {
	prefix := snsPrefix(ns)
	return e.Dump(func(c sns.Change) error {
		recs, err := snsRecords(prefix, c)
		return emitRecords(recs, err, emit)
	})
}

// Recovered gathers, namespace by namespace, what a store hands back at
// start-up. Its Load is the store's persist.Loader. SQS messages go
// straight into their queue's memory (an sqs.Restorer per namespace), so
// that recovery holds no second copy of them. Load copies whatever it
// keeps of a key or value (oplog.Options.LoaderCopies): they may be views
// of the store's files, gone once the store's open returns.
type Recovered struct {
	sns        map[Namespace]*sns.State
	sqs        map[Namespace]*sqs.Restorer
	deliveries recoveredDeliveries
	clock      time.Duration
	// lastSQS is the namespace of the latest SQS key and its Restorer: a
	// store hands back a namespace's keys one after another.
	lastSQS Namespace
	lastRes *sqs.Restorer
}

// NewRecovered returns an empty Recovered.
func NewRecovered() *Recovered {
	return &Recovered{sns: map[Namespace]*sns.State{}, sqs: map[Namespace]*sqs.Restorer{}}
}

// Load implements persist.Loader. Keys of other services than SNS, SQS,
// deliveries and the clock are not this version's to read and fail the
// recovery rather than be dropped.
func (r *Recovered) Load(key, value []byte) error {
	if len(key) > 4 && string(key[:4]) == "sqs/" {
		return r.loadSQS(key, value)
	}
	if ok, err := r.loadOther(key, value); ok {
		return err
	}
	parts := strings.SplitN(string(key), "/", 7)
	if len(parts) < 5 || parts[0] != "sns" || parts[3] != "topic" || parts[1] == "" || parts[2] == "" || parts[4] == "" {
		return formatError(key, "not a key of this version")
	}
	ns := Namespace{parts[1], parts[2]}
	st := r.sns[ns]
	if st == nil {
		st = &sns.State{}
		r.sns[ns] = st
	}
	kind := ""
	if len(parts) > 5 {
		kind = parts[5]
	}
	switch {
	case len(parts) == 5:
		var v sns.TopicState
		if err := decode(key, value, &v); err != nil {
			return err
		}
		st.Topics = append(st.Topics, v)
	case kind == "seq" && len(parts) == 6:
		var v sns.TopicSequence
		if err := decode(key, value, &v); err != nil {
			return err
		}
		st.Sequences = append(st.Sequences, v)
	case kind == "sub" && len(parts) == 7:
		var v sns.SubscriptionState
		if err := decode(key, value, &v); err != nil {
			return err
		}
		st.Subscriptions = append(st.Subscriptions, v)
	case kind == "dedup" && len(parts) == 7:
		var v sns.DedupState
		if err := decode(key, value, &v); err != nil {
			return err
		}
		st.Dedup = append(st.Dedup, v)
	case kind == "archive" && len(parts) == 7:
		var v sns.ArchivedState
		if err := decode(key, value, &v); err != nil {
			return err
		}
		st.Archived = append(st.Archived, v)
	default:
		return formatError(key, "not a key of this version")
	}
	return nil
}

// SNSNamespaces lists the namespaces that hold SNS state, sorted.
func (r *Recovered) SNSNamespaces() []Namespace { return sortedNamespaces(r.sns) }

func sortedNamespaces[V any](m map[Namespace]V) []Namespace {
	out := make([]Namespace, 0, len(m))
	for ns := range m {
		out = append(out, ns)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Account != out[j].Account {
			return out[i].Account < out[j].Account
		}
		return out[i].Region < out[j].Region
	})
	return out
}

// SNS returns the recovered state of ns's SNS engine, for sns.Engine.Restore.
func (r *Recovered) SNS(ns Namespace) sns.State {
	if st := r.sns[ns]; st != nil {
		return *st
	}
	return sns.State{}
}
