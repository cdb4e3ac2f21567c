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
//	clock/offset                           clockState: how far the clock was moved ahead of the wall clock
//
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

// jobKey is the key of a job of the topic topicArn.
func jobKey(topicArn string, id uint64) (string, error) {
	p := strings.Split(topicArn, ":")
	if len(p) != 6 || p[3] == "" || p[4] == "" {
		return "", fmt.Errorf("durable: delivery job %d: topic ARN %q names no account and region", id, topicArn)
	}
	return deliveryRoot + p[4] + "/" + p[3] + "/job/" + fmt.Sprintf("%016x", id), nil
}

// deliveryRecords encodes c, deletions first (as delivery.Change says).
func deliveryRecords(c delivery.Change) ([]persist.Record, error) {
	var recs []persist.Record
	if c.Reset {
		recs = append(recs, persist.DeletePrefix([]byte(deliveryRoot)))
	}
	for _, st := range c.Ended {
		k, err := jobKey(st.TopicArn, st.ID)
		if err != nil {
			return nil, err
		}
		recs = append(recs, persist.Delete([]byte(k)))
	}
	for _, st := range c.Jobs {
		k, err := jobKey(st.TopicArn, st.ID)
		if err != nil {
			return nil, err
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
	if len(parts) != 5 || parts[1] == "" || parts[2] == "" || parts[3] != "job" || len(parts[4]) != 16 {
		return true, formatError(key, "not a key of this version")
	}
	id, err := strconv.ParseUint(parts[4], 16, 64)
	if err != nil {
		return true, formatError(key, "not a job id")
	}
	var v delivery.JobState
	if err := decode(key, value, &v); err != nil {
		return true, err
	}
	if v.ID != id {
		return true, formatError(key, "the job's id is not its key's")
	}
	r.jobs = append(r.jobs, v)
	return true, nil
}

// Deliveries returns the pending deliveries recovered, for
// delivery.Dispatcher.Restore.
func (r *Recovered) Deliveries() []delivery.JobState { return r.jobs }

// ClockOffset returns the clock offset recovered, 0 if none was stored.
func (r *Recovered) ClockOffset() time.Duration { return r.clock }
