package durable

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/persist"
)

// Deliveries and the clock have keys of their own:
//
//	delivery/<account>/<region>/job/<id>   delivery.JobState (<id>: 16 hex digits; the topic's namespace)
//	delivery/<account>/<region>/msg/<ref>  delivery.MessageState (<ref>: 16 hex digits): a notification,
//	                                       once for every job whose MessageRef names it
//	clock/offset                           clockState: how far the clock was moved ahead of the wall clock
//
// A job with a MessageRef leaves its Message out: the dispatcher records a
// message in the batch of the first job that delivers it and deletes it in
// the batch of the last one's end, so no batch leaves a job without its
// message. A job without a MessageRef (written before messages had keys of
// their own) holds its Message itself, and is read and written so still.
// A reset of the dispatcher is a DeletePrefix of "delivery/".

const (
	deliveryRoot = "delivery/"
	clockKey     = "clock/offset"
)

// DeliveryJournal is the delivery.Journal of the dispatcher, writing to st.
func DeliveryJournal(st persist.Store) delivery.Journal {
	return deliveryJournal{storeJournal{st: st}}
}

type deliveryJournal struct{ storeJournal }

// Record implements delivery.Journal: the Change is one batch.
func (j deliveryJournal) Record(c delivery.Change) delivery.Waiter {
	return j.enqueue(deliveryRecords(c))
}

// deliveryKey is the key of a job or message (kind) of the topic topicArn.
func deliveryKey(topicArn, kind string, id uint64) (string, error) {
	p := strings.Split(topicArn, ":")
	if len(p) != 6 || p[3] == "" || p[4] == "" {
		return "", fmt.Errorf("durable: delivery %s %d: topic ARN %q names no account and region", kind, id, topicArn)
	}
	return deliveryRoot + p[4] + "/" + p[3] + "/" + kind + "/" + fmt.Sprintf("%016x", id), nil
}

// deliveryRecords encodes c, deletions first (as delivery.Change says).
func deliveryRecords(c delivery.Change) ([]persist.Record, error) {
	var recs []persist.Record
	if c.Reset {
		recs = append(recs, persist.DeletePrefix([]byte(deliveryRoot)))
	}
	for _, st := range c.Ended {
		k, err := deliveryKey(st.TopicArn, "job", st.ID)
		if err != nil {
			return nil, err
		}
		recs = append(recs, persist.Delete([]byte(k)))
	}
	for _, m := range c.Forgotten {
		k, err := deliveryKey(m.Message.TopicArn, "msg", m.Ref)
		if err != nil {
			return nil, err
		}
		recs = append(recs, persist.Delete([]byte(k)))
	}
	for _, m := range c.Messages {
		k, err := deliveryKey(m.Message.TopicArn, "msg", m.Ref)
		if err != nil {
			return nil, err
		}
		v, err := encode(m)
		if err != nil {
			return nil, err
		}
		recs = append(recs, persist.Put([]byte(k), v))
	}
	for _, st := range c.Jobs {
		k, err := deliveryKey(st.TopicArn, "job", st.ID)
		if err != nil {
			return nil, err
		}
		if st.MessageRef != 0 {
			st.Message = nil // its message's key holds it
		}
		v, err := encode(st)
		if err != nil {
			return nil, err
		}
		recs = append(recs, persist.Put([]byte(k), v))
	}
	return recs, nil
}

// EmitDeliveries writes the pending deliveries of d through emit: the part
// of a persist.Snapshotter for the dispatcher.
func EmitDeliveries(d *delivery.Dispatcher, emit func(key, value []byte) error) error {
	return d.Dump(func(c delivery.Change) error {
		recs, err := deliveryRecords(c)
		return emitRecords(recs, err, emit)
	})
}

// clockState is the value of clockKey.
type clockState struct {
	Offset time.Duration // nanoseconds
}

// ClockOffset is the batch that records the clock's offset.
func ClockOffset(offset time.Duration) ([]persist.Record, error) {
	v, err := encode(clockState{offset})
	if err != nil {
		return nil, err
	}
	return []persist.Record{persist.Put([]byte(clockKey), v)}, nil
}

// EmitClock writes the clock's offset through emit, for a snapshot.
func EmitClock(offset time.Duration, emit func(key, value []byte) error) error {
	recs, err := ClockOffset(offset)
	if err != nil {
		return err
	}
	return emit(recs[0].Key, recs[0].Value)
}

// recoveredDeliveries are the jobs and messages recovery found; the jobs
// get their messages in Deliveries, when every key is in.
type recoveredDeliveries struct {
	jobs []delivery.JobState
	msgs map[uint64]*delivery.Message // by Ref
}

// loadOther loads the keys of deliveries and the clock; it reports false
// for a key of neither.
func (r *Recovered) loadOther(key, value []byte) (bool, error) {
	k := string(key)
	if k == clockKey {
		var v clockState
		if err := decode(key, value, &v); err != nil {
			return true, err
		}
		r.clock = v.Offset
		return true, nil
	}
	if !strings.HasPrefix(k, deliveryRoot) {
		return false, nil
	}
	parts := strings.Split(k, "/")
	if len(parts) != 5 || parts[1] == "" || parts[2] == "" || (parts[3] != "job" && parts[3] != "msg") || len(parts[4]) != 16 {
		return true, formatError(key, "not a key of this version")
	}
	id, err := strconv.ParseUint(parts[4], 16, 64)
	if err != nil {
		return true, formatError(key, "not a delivery id")
	}
	if parts[3] == "msg" {
		var v delivery.MessageState
		if err := decode(key, value, &v); err != nil {
			return true, err
		}
		if v.Ref != id || v.Message == nil {
			return true, formatError(key, "not the message its key names")
		}
		if r.deliveries.msgs == nil {
			r.deliveries.msgs = map[uint64]*delivery.Message{}
		}
		r.deliveries.msgs[id] = v.Message
		return true, nil
	}
	var v delivery.JobState
	if err := decode(key, value, &v); err != nil {
		return true, err
	}
	if v.ID != id {
		return true, formatError(key, "the job's id is not its key's")
	}
	r.deliveries.jobs = append(r.deliveries.jobs, v)
	return true, nil
}

// Deliveries returns the pending deliveries recovered, for
// delivery.Dispatcher.Restore: the jobs of one message share one
// *delivery.Message. A job whose message is not stored fails it: the
// dispatcher never writes one, so the data dir is damaged.
func (r *Recovered) Deliveries() ([]delivery.JobState, error) {
	jobs := r.deliveries.jobs
	for i := range jobs {
		st := &jobs[i]
		if st.MessageRef == 0 {
			continue
		}
		m := r.deliveries.msgs[st.MessageRef]
		if m == nil {
			k, _ := deliveryKey(st.TopicArn, "job", st.ID)
			return nil, fmt.Errorf("durable: delivery %s names message %016x, which the data dir does not hold: it is damaged", k, st.MessageRef)
		}
		st.Message = m
	}
	return jobs, nil
}

// ClockOffset returns the clock offset recovered, 0 if none was stored.
func (r *Recovered) ClockOffset() time.Duration { return r.clock }
