package sns

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/fanout/fanout/delivery"
)

// FIFO topics can keep what they publish (ArchivePolicy) and subscriptions
// can have it delivered again (ReplayPolicy).
// https://docs.aws.amazon.com/sns/latest/dg/fifo-message-archiving-replay.html

// archivePolicy is a topic's ArchivePolicy.
type archivePolicy struct {
	days int
}

// parseArchivePolicy reads {"MessageRetentionPeriod":"<days>"}; {} or ""
// turn archiving off (nil).
func parseArchivePolicy(v string) (*archivePolicy, *attrError) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal([]byte(v), &doc) != nil {
		return nil, &attrError{"ArchivePolicy: failed to parse JSON."}
	}
	raw, ok := doc["MessageRetentionPeriod"]
	for k := range doc {
		if k != "MessageRetentionPeriod" {
			return nil, &attrError{"ArchivePolicy: Unexpected JSON member: " + k}
		}
	}
	if !ok {
		return nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(raw) // a bare number
	}
	days, err := strconv.Atoi(s)
	if err != nil || days < 1 || days > 365 {
		return nil, &attrError{"ArchivePolicy: MessageRetentionPeriod must be an integer from 1 to 365"}
	}
	return &archivePolicy{days: days}, nil
}

func (p *archivePolicy) json() string {
	return `{"MessageRetentionPeriod":"` + strconv.Itoa(p.days) + `"}`
}

func (p *archivePolicy) retention() time.Duration { return time.Duration(p.days) * 24 * time.Hour }

// archived is one message in a topic's archive.
type archived struct {
	msg        *delivery.Message
	at         time.Time
	unrecorded bool // as dedupEntry's
}

// pruneArchive drops messages older than the retention period, or all of
// them when archiving is off. Callers hold mu.
func (t *Topic) pruneArchive(now time.Time) {
	if t.cfg.archive == nil {
		t.archive = nil
		return
	}
	cut := now.Add(-t.cfg.archive.retention())
	n := 0
	for n < len(t.archive) && t.archive[n].at.Before(cut) {
		n++
	}
	if n > 0 {
		t.archive = append(t.archive[:0], t.archive[n:]...)
	}
}

// replayPolicy is a subscription's ReplayPolicy.
type replayPolicy struct {
	start, end time.Time // end zero: up to the moment the replay starts
}

// parseReplayPolicy reads {"PointType":"Timestamp","StartingPoint":"<ISO>"
// [,"EndingPoint":"<ISO>"]}. The topic must be a FIFO topic that archives.
func parseReplayPolicy(v string, x subContext) (*replayPolicy, *attrError) {
	if !x.fifoTopic || !x.archiving {
		return nil, &attrError{"ReplayPolicy: the topic has no ArchivePolicy; only FIFO topics that archive messages can replay them"}
	}
	var doc struct {
		PointType     string
		StartingPoint string
		EndingPoint   string
	}
	if json.Unmarshal([]byte(v), &doc) != nil {
		return nil, &attrError{"ReplayPolicy: failed to parse JSON."}
	}
	if doc.PointType != "Timestamp" {
		return nil, badValue("ReplayPolicy: PointType", doc.PointType, "Timestamp")
	}
	start, err := parseTime(doc.StartingPoint)
	if err != nil {
		return nil, &attrError{"ReplayPolicy: StartingPoint must be an ISO 8601 timestamp"}
	}
	if start.After(x.now) {
		return nil, &attrError{"ReplayPolicy: StartingPoint must not be in the future"}
	}
	p := &replayPolicy{start: start}
	if doc.EndingPoint != "" {
		end, err := parseTime(doc.EndingPoint)
		if err != nil {
			return nil, &attrError{"ReplayPolicy: EndingPoint must be an ISO 8601 timestamp"}
		}
		if end.Before(start) {
			return nil, &attrError{"ReplayPolicy: EndingPoint must not be before StartingPoint"}
		}
		p.end = end
	}
	return p, nil
}

func parseTime(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, s)
}

// replay delivers the archived messages in the subscription's replay window
// to it alone, oldest first, through its filter policy, marked Replayed.
// Callers hold t.publish, so no new message overtakes the replayed ones.
func (t *Topic) replay(s *Subscription) {
	now := t.engine.clock.Now()
	t.mu.Lock()
	p := s.cfg.replay
	if p == nil || s.removed {
		t.mu.Unlock()
		return
	}
	t.pruneArchive(now)
	end := p.end
	if end.IsZero() {
		end = now
	}
	var msgs []*delivery.Message
	for _, a := range t.archive {
		if !a.at.Before(p.start) && !a.at.After(end) {
			msgs = append(msgs, a.msg)
		}
	}
	target := s.target()
	s.cfg.replayStatus = "InProgress"
	t.mu.Unlock()

	for _, m := range msgs {
		target.deliver(t.engine, m.AsReplay(), attributeMap(m.Attributes), nil)
	}

	t.mu.Lock()
	if s.cfg.replay == p {
		s.cfg.replayStatus = "Completed"
	}
	t.mu.Unlock()
}
