package sqs

import (
	"errors"

	"github.com/fanout/fanout/awserr"
)

// BatchFailure is one failed entry of a batch, reported with HTTP 200.
type BatchFailure struct {
	ID          string
	SenderFault bool
	Code        string
	Message     string
}

// Failure turns an error into a batch failure entry.
func Failure(id string, err error) BatchFailure {
	var ae *awserr.Error
	if !errors.As(err, &ae) {
		ae = awserr.Internal.New("%v", err)
	}
	return BatchFailure{ID: id, SenderFault: ae.FaultOrSender() == awserr.Sender, Code: ae.QueryCodeOrCode(), Message: ae.Message}
}

// validBatchID checks an entry id: 1 to 80 of [A-Za-z0-9_-].
func validBatchID(id string) bool {
	if len(id) == 0 || len(id) > 80 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// maxBatchBytes is the limit on a SendMessageBatch's bodies and attributes together.
const maxBatchBytes = 1048576

// CheckBatch applies the rules every batch action shares: 1 to 10 entries,
// each id 1-80 of [A-Za-z0-9_-], no id twice. entry names the entry type for
// the empty-batch message, e.g. "SendMessageBatchRequestEntry".
func CheckBatch(entry string, ids []string) error {
	if err := CheckBatchSize(entry, len(ids)); err != nil {
		return err
	}
	// At most 10 ids: comparing each with those before it allocates
	// nothing, where a set would cost a map per batch.
	for i, id := range ids {
		if !validBatchID(id) {
			return ErrInvalidBatchEntryID.New("A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
		}
		for _, before := range ids[:i] {
			if before == id {
				return ErrBatchEntryIdsNotDist.New("Id %s repeated.", id)
			}
		}
	}
	return nil
}

// CheckBatchSize refuses an empty batch or one of more than 10 entries; the
// wire layer calls it with the count alone, before decoding any entry.
func CheckBatchSize(entry string, n int) error {
	if n == 0 {
		return ErrEmptyBatchRequest.New("There should be at least one %s in the request.", entry)
	}
	if n > 10 {
		return ErrTooManyEntries.New("Maximum number of entries per request are 10. You have sent %d.", n)
	}
	return nil
}

// SendBatchEntry is one entry of SendMessageBatch.
type SendBatchEntry struct {
	ID string
	SendInput
}

// SendBatchResult is one successful entry of SendMessageBatch.
type SendBatchResult struct {
	ID string
	SendResult
}

// SendBatchBuffer holds what SendBatchInto returns, the results and the
// bytes of their ids and digests. A caller that sends many batches reuses
// one (1.6 KB a batch otherwise); the results stay valid until it does.
type SendBatchBuffer struct {
	results [10]SendBatchResult
	idMD5s  [10 * hexIDs]byte
}

// Reset drops what the buffer refers to, so that a buffer kept for reuse
// does not keep the last batch's request alive.
func (b *SendBatchBuffer) Reset() { clear(b.results[:]) }

// SendBatch sends up to 10 messages; entries that fail validation are
// reported in failed while the others are sent.
func (q *Queue) SendBatch(entries []SendBatchEntry) (ok []SendBatchResult, failed []BatchFailure, err error) {
	return q.SendBatchInto(new(SendBatchBuffer), entries)
}

// SendBatchInto is SendBatch with its results in buf.
func (q *Queue) SendBatchInto(buf *SendBatchBuffer, entries []SendBatchEntry) (ok []SendBatchResult, failed []BatchFailure, err error) {
	var idBuf [10]string // no allocation for a batch of at most 10
	ids := idBuf[:0]
	total := 0
	for _, e := range entries {
		ids = append(ids, e.ID)
		total += len(e.Body) + attributesSize(e.Attributes)
	}
	if err := CheckBatch("SendMessageBatchRequestEntry", ids); err != nil {
		return nil, nil, err
	}
	cfg := q.cfg() // one copy for every entry
	if q.Fifo() {
		// On a FIFO queue a missing group or deduplication id fails the whole
		// batch, not just its entry.
		for _, e := range entries {
			if e.GroupID == "" {
				return nil, nil, ErrInvalidParameterValue.New("The request must contain the parameter MessageGroupId.")
			}
			if e.DeduplicationID == "" && !cfg.contentDedup {
				return nil, nil, ErrInvalidParameterValue.New("The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
			}
		}
	}
	if total > maxBatchBytes {
		return nil, nil, ErrBatchRequestTooLong.New("Batch requests cannot be longer than %d bytes. You have sent %d bytes.", maxBatchBytes, total)
	}
	if err := storeGuard.check(); err != nil {
		return nil, nil, err
	}
	// The drafts may hold slices of the request; enqueue copies what it
	// keeps. At most 10 entries (checked above): the drafts stay on the
	// stack, and the replies and their ids and MD5s are in buf.
	var msgBuf [10]draft
	var delayBuf [10]*int
	msgs, delays := msgBuf[:0], delayBuf[:0]
	idMD5s := buf.idMD5s[:]
	for k := range entries {
		e := &entries[k]
		// Each is written where it is kept: the next free draft and result.
		n := len(msgs)
		res := &buf.results[n]
		if perr := q.prepare(&cfg, &e.SendInput, false, idMD5s[k*hexIDs:(k+1)*hexIDs:(k+1)*hexIDs], &msgBuf[n], &res.SendResult); perr != nil {
			failed = append(failed, Failure(e.ID, perr))
			continue
		}
		res.ID = e.ID
		msgs = msgBuf[:n+1]
		delays = append(delays, e.DelaySeconds)
		ok = buf.results[:n+1]
	}
	need, largest := 0, 0
	for i := range msgs {
		need += msgs[i].storedSize()
		largest = max(largest, msgs[i].storedSize())
	}
	q.lockWithRoom(need, largest, len(msgs))
	if q.deleted {
		q.unlock()
		return nil, nil, queueDoesNotExist()
	}
	now := q.engine.clock.Now()
	if !q.journaling() {
		for i := range msgs {
			q.admit(&msgs[i], delays[i], now, &ok[i].SendResult)
		}
		q.unlock()
		return ok, failed, nil
	}
	// One batch for every entry: all or nothing on disk.
	list := make([]sent, len(msgs))
	for i := range msgs {
		list[i] = q.admit(&msgs[i], delays[i], now, &ok[i].SendResult)
	}
	w := q.recordSends(list)
	q.unlock()
	if err := durable(w); err != nil {
		q.undoSends(list)
		return nil, nil, err
	}
	return ok, failed, nil
}
