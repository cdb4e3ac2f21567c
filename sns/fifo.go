package sns

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
	"unsafe"
)

// DedupWindow is how long a FIFO topic remembers a deduplication id.
// https://docs.aws.amazon.com/sns/latest/dg/fifo-message-dedup.html
const DedupWindow = 5 * time.Minute

// dedupWindow remembers the deduplication ids a FIFO topic saw in the last
// five minutes, forgetting them lazily as the clock moves.
type dedupWindow struct {
	seen map[string]dedupEntry
	log  []dedupKey // in arrival order, for expiry
}

type dedupEntry struct {
	messageID, sequence string
	at                  time.Time
	// unrecorded: the journal has not been told yet (its publish's
	// deliveries are recorded first); a compaction leaves it out.
	unrecorded bool
}

type dedupKey struct {
	key string
	at  time.Time
}

// check returns the first publish of key if it is still in the window.
func (w *dedupWindow) check(key string, now time.Time) (dedupEntry, bool) {
	w.expire(now)
	e, ok := w.seen[key]
	return e, ok
}

func (w *dedupWindow) remember(key string, e dedupEntry) {
	if w.seen == nil {
		w.seen = map[string]dedupEntry{}
	}
	w.seen[key] = e
	w.log = append(w.log, dedupKey{key, e.at})
}

func (w *dedupWindow) expire(now time.Time) {
	n := 0
	for n < len(w.log) && !now.Before(w.log[n].at.Add(DedupWindow)) {
		if e, ok := w.seen[w.log[n].key]; ok && e.at.Equal(w.log[n].at) {
			delete(w.seen, w.log[n].key)
		}
		n++
	}
	if n > 0 {
		w.log = append(w.log[:0], w.log[n:]...)
	}
}

// sequenceBase makes SequenceNumbers look like AWS's: 20 digits.
const sequenceBase = 10000000000000000000

// nextSequence hands out the topic's next SequenceNumber. Callers hold mu.
func (t *Topic) nextSequence() string {
	t.sequence++
	return strconv.FormatUint(sequenceBase+t.sequence, 10)
}

// dedupKey returns the key a FIFO message is deduplicated by: its id, within
// its group when the topic's FifoThroughputScope is MessageGroup.
func (t *Topic) dedupKey(groupID, dedupID string) string {
	if t.cfg.throughputScope == "MessageGroup" {
		return groupID + "\x00" + dedupID
	}
	return dedupID
}

// contentDedupID is the id ContentBasedDeduplication derives: the SHA-256 of
// the message body, in hex.
func contentDedupID(body string) string {
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(body), len(body))) // read-only view, no copy
	return hex.EncodeToString(sum[:])
}
