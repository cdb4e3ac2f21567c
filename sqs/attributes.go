package sqs

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/fanout/fanout/awserr"
)

// Attribute names, as AWS spells them.
const (
	AttrAll                           = "All"
	AttrDelaySeconds                  = "DelaySeconds"
	AttrMaximumMessageSize            = "MaximumMessageSize"
	AttrMessageRetentionPeriod        = "MessageRetentionPeriod"
	AttrReceiveMessageWaitTimeSeconds = "ReceiveMessageWaitTimeSeconds"
	AttrVisibilityTimeout             = "VisibilityTimeout"
	AttrPolicy                        = "Policy"
	AttrRedrivePolicy                 = "RedrivePolicy"
	AttrRedriveAllowPolicy            = "RedriveAllowPolicy"
	AttrKmsMasterKeyID                = "KmsMasterKeyId"
	AttrKmsDataKeyReusePeriodSeconds  = "KmsDataKeyReusePeriodSeconds"
	AttrSqsManagedSseEnabled          = "SqsManagedSseEnabled"
	AttrFifoQueue                     = "FifoQueue"
	AttrContentBasedDeduplication     = "ContentBasedDeduplication"
	AttrDeduplicationScope            = "DeduplicationScope"
	AttrFifoThroughputLimit           = "FifoThroughputLimit"
	AttrQueueArn                      = "QueueArn"
	AttrApproximateNumberOfMessages   = "ApproximateNumberOfMessages"
	AttrApproximateNotVisible         = "ApproximateNumberOfMessagesNotVisible"
	AttrApproximateDelayed            = "ApproximateNumberOfMessagesDelayed"
	AttrCreatedTimestamp              = "CreatedTimestamp"
	AttrLastModifiedTimestamp         = "LastModifiedTimestamp"
)

// attributeOrder is the order in which GetQueueAttributes lists attributes;
// the readable ones not in this list do not exist.
var attributeOrder = []string{
	AttrQueueArn, AttrApproximateNumberOfMessages, AttrApproximateNotVisible, AttrApproximateDelayed,
	AttrCreatedTimestamp, AttrLastModifiedTimestamp, AttrVisibilityTimeout, AttrMaximumMessageSize,
	AttrMessageRetentionPeriod, AttrDelaySeconds, AttrReceiveMessageWaitTimeSeconds, AttrPolicy,
	AttrRedrivePolicy, AttrRedriveAllowPolicy, AttrKmsMasterKeyID, AttrKmsDataKeyReusePeriodSeconds,
	AttrSqsManagedSseEnabled, AttrFifoQueue, AttrContentBasedDeduplication, AttrDeduplicationScope,
	AttrFifoThroughputLimit,
}

var readable = func() map[string]bool {
	m := map[string]bool{AttrAll: true}
	for _, n := range attributeOrder {
		m[n] = true
	}
	return m
}()

// fifoOnly attributes are unknown on standard queues.
var fifoOnly = map[string]bool{
	AttrContentBasedDeduplication: true, AttrDeduplicationScope: true, AttrFifoThroughputLimit: true,
}

// RedrivePolicy is a queue's dead-letter configuration.
type RedrivePolicy struct {
	DeadLetterTargetArn string
	MaxReceiveCount     int
}

// RedriveAllowPolicy says which source queues may use this queue as their DLQ.
type RedriveAllowPolicy struct {
	Permission      string // allowAll | denyAll | byQueue
	SourceQueueArns []string
}

// config is a queue's settable attributes, parsed.
type config struct {
	delaySeconds       int
	maximumMessageSize int
	retentionPeriod    int
	receiveWait        int
	visibilityTimeout  int
	policy             string
	redrive            *RedrivePolicy
	redriveAllow       *RedriveAllowPolicy
	kmsKeyID           string
	kmsReuse           int
	sseEnabled         bool
	fifo               bool
	contentDedup       bool
	dedupScope         string
	throughputLimit    string
}

func defaultConfig(fifo bool) config {
	c := config{
		maximumMessageSize: 1048576,
		retentionPeriod:    345600,
		visibilityTimeout:  30,
		kmsReuse:           300,
		sseEnabled:         true,
		fifo:               fifo,
	}
	if fifo {
		c.dedupScope = "queue"
		c.throughputLimit = "perQueue"
	}
	return c
}

// render returns the string value of a settable attribute, and whether it has one.
func (c *config) render(name string) (string, bool) {
	switch name {
	case AttrDelaySeconds:
		return strconv.Itoa(c.delaySeconds), true
	case AttrMaximumMessageSize:
		return strconv.Itoa(c.maximumMessageSize), true
	case AttrMessageRetentionPeriod:
		return strconv.Itoa(c.retentionPeriod), true
	case AttrReceiveMessageWaitTimeSeconds:
		return strconv.Itoa(c.receiveWait), true
	case AttrVisibilityTimeout:
		return strconv.Itoa(c.visibilityTimeout), true
	case AttrPolicy:
		return c.policy, c.policy != ""
	case AttrRedrivePolicy:
		if c.redrive == nil {
			return "", false
		}
		return renderRedrive(c.redrive), true
	case AttrRedriveAllowPolicy:
		if c.redriveAllow == nil {
			return "", false
		}
		return renderRedriveAllow(c.redriveAllow), true
	case AttrKmsMasterKeyID:
		return c.kmsKeyID, c.kmsKeyID != ""
	case AttrKmsDataKeyReusePeriodSeconds:
		return strconv.Itoa(c.kmsReuse), c.kmsKeyID != ""
	case AttrSqsManagedSseEnabled:
		return strconv.FormatBool(c.sseEnabled), true
	case AttrFifoQueue:
		return "true", c.fifo
	case AttrContentBasedDeduplication:
		return strconv.FormatBool(c.contentDedup), c.fifo
	case AttrDeduplicationScope:
		return c.dedupScope, c.fifo
	case AttrFifoThroughputLimit:
		return c.throughputLimit, c.fifo
	}
	return "", false
}

// redriveTarget is what validating a RedrivePolicy needs of its target.
// It is read before the source queue's lock is taken (see the lock order in
// doc.go); policies are replaced, never changed in place, so the pointer
// stays valid.
type redriveTarget struct {
	fifo  bool
	allow *RedriveAllowPolicy
}

// redriveTargets maps ARNs to the queues they name; an ARN missing from it
// names no queue.
type redriveTargets map[string]redriveTarget

// apply validates attrs and sets them on c. create says whether this is
// CreateQueue (where FifoQueue may be given) or SetQueueAttributes. self is
// the queue's own ARN; targets holds the RedrivePolicy's target, unless that
// is the queue itself. Nothing is changed when an error is returned.
func (c *config) apply(attrs map[string]string, create bool, self string, targets redriveTargets) *awserr.Error {
	next := *c
	// Apply in a fixed order so that the error reported for several bad
	// attributes does not depend on map order.
	for _, name := range sortedKeys(attrs) {
		v := attrs[name]
		if err := next.set(name, v, create); err != nil {
			return err
		}
	}
	if next.redrive != nil && attrs[AttrRedrivePolicy] != "" {
		if err := checkRedriveTarget(next.redrive, attrs[AttrRedrivePolicy], &next, create, self, targets); err != nil {
			return err
		}
	}
	if next.throughputLimit == "perMessageGroupId" && next.dedupScope != "messageGroup" {
		return ErrInvalidAttributeValue.New("Invalid value for the parameter FifoThroughputLimit. Reason: You can specify perMessageGroupId only when DeduplicationScope is set to messageGroup.")
	}
	*c = next
	return nil
}

func (c *config) set(name, v string, create bool) *awserr.Error {
	intRange := func(dst *int, lo, hi int) *awserr.Error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			return ErrInvalidAttributeValue.New("Invalid value for the parameter %s.", name)
		}
		*dst = n
		return nil
	}
	boolean := func(dst *bool) *awserr.Error {
		switch strings.ToLower(v) {
		case "true":
			*dst = true
		case "false":
			*dst = false
		default:
			return ErrInvalidAttributeValue.New("Invalid value for the parameter %s.", name)
		}
		return nil
	}
	if fifoOnly[name] && !c.fifo {
		switch name {
		case AttrDeduplicationScope:
			return ErrInvalidAttributeName.New("You can specify the DeduplicationScope only when FifoQueue is set to true.")
		case AttrFifoThroughputLimit:
			return ErrInvalidAttributeName.New("You can specify the FifoThroughputLimit only when FifoQueue is set to true.")
		}
		return ErrInvalidAttributeName.New("Unknown Attribute %s.", name)
	}
	switch name {
	case AttrDelaySeconds:
		return intRange(&c.delaySeconds, 0, 900)
	case AttrMaximumMessageSize:
		return intRange(&c.maximumMessageSize, 1024, 1048576)
	case AttrMessageRetentionPeriod:
		return intRange(&c.retentionPeriod, 60, 1209600)
	case AttrReceiveMessageWaitTimeSeconds:
		return intRange(&c.receiveWait, 0, 20)
	case AttrVisibilityTimeout:
		return intRange(&c.visibilityTimeout, 0, 43200)
	case AttrKmsDataKeyReusePeriodSeconds:
		return intRange(&c.kmsReuse, 60, 86400)
	case AttrPolicy:
		if v == "" {
			c.policy = ""
			return nil
		}
		var buf bytes.Buffer
		var probe map[string]any
		if json.Unmarshal([]byte(v), &probe) != nil || json.Compact(&buf, []byte(v)) != nil {
			return ErrInvalidAttributeValue.New("Invalid value for the parameter Policy.")
		}
		c.policy = buf.String()
	case AttrRedrivePolicy:
		if v == "" {
			c.redrive = nil
			return nil
		}
		p, err := parseRedrive(v)
		if err != nil {
			return err
		}
		c.redrive = p
	case AttrRedriveAllowPolicy:
		if v == "" {
			c.redriveAllow = nil
			return nil
		}
		p, err := parseRedriveAllow(v)
		if err != nil {
			return err
		}
		c.redriveAllow = p
	case AttrKmsMasterKeyID:
		c.kmsKeyID = v
		if v != "" {
			c.sseEnabled = false
		}
	case AttrSqsManagedSseEnabled:
		if err := boolean(&c.sseEnabled); err != nil {
			return err
		}
		if c.sseEnabled && c.kmsKeyID != "" {
			c.kmsKeyID = ""
		}
	case AttrFifoQueue:
		if !create {
			// On a standard queue FifoQueue is unknown; on a FIFO queue it
			// may be restated but not changed.
			if !c.fifo {
				return ErrInvalidAttributeName.New("Unknown Attribute FifoQueue.")
			}
			if strings.EqualFold(v, "true") {
				return nil
			}
			return ErrInvalidAttributeValue.New("Invalid value for the parameter FifoQueue. Reason: Modifying queue type is not supported.")
		}
		var b bool
		if err := boolean(&b); err != nil {
			return err
		}
		if b != c.fifo {
			return ErrInvalidAttributeValue.New("Invalid value for the parameter FifoQueue.")
		}
	case AttrContentBasedDeduplication:
		return boolean(&c.contentDedup)
	case AttrDeduplicationScope:
		if v != "queue" && v != "messageGroup" {
			return ErrInvalidAttributeValue.New("Invalid value for the parameter DeduplicationScope.")
		}
		c.dedupScope = v
	case AttrFifoThroughputLimit:
		if v != "perQueue" && v != "perMessageGroupId" {
			return ErrInvalidAttributeValue.New("Invalid value for the parameter FifoThroughputLimit.")
		}
		c.throughputLimit = v
	default:
		return ErrInvalidAttributeName.New("Unknown Attribute %s.", name)
	}
	return nil
}

// parseRedrive reads a RedrivePolicy, whose maxReceiveCount may be a JSON
// number or a string.
func parseRedrive(v string) (*RedrivePolicy, *awserr.Error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return nil, invalidValue(v, AttrRedrivePolicy, "Redrive policy is not a valid JSON map.")
	}
	var p RedrivePolicy
	arn, okArn := raw["deadLetterTargetArn"]
	cnt, okCnt := raw["maxReceiveCount"]
	if !okArn || !okCnt {
		return nil, invalidValue(v, AttrRedrivePolicy, "Redrive policy does not contain mandatory attribute: "+map[bool]string{true: "maxReceiveCount", false: "deadLetterTargetArn"}[okArn]+".")
	}
	if json.Unmarshal(arn, &p.DeadLetterTargetArn) != nil {
		return nil, invalidValue(v, AttrRedrivePolicy, "Invalid value for deadLetterTargetArn.")
	}
	var n json.Number
	var s string
	countText := string(cnt)
	if json.Unmarshal(cnt, &s) == nil {
		n = json.Number(s)
		countText = s
	} else if json.Unmarshal(cnt, &n) != nil {
		n = ""
	}
	c, err := strconv.Atoi(string(n))
	if err != nil || c < 1 || c > 1000 {
		return nil, invalidValue(v, AttrRedrivePolicy, "Invalid value for maxReceiveCount: "+countText+", valid values are from 1 to 1000 both inclusive.")
	}
	p.MaxReceiveCount = c
	return &p, nil
}

// checkRedriveTarget validates the target of p for a queue about to take
// the settings next. An existing queue may name itself: AWS documents no rule
// against it (its docs are silent), and a queue that is its own dead-letter
// queue is something cloud posture checkers look for, so AWS accepts it. A
// queue being created cannot, since it does not exist yet.
func checkRedriveTarget(p *RedrivePolicy, raw string, next *config, create bool, self string, targets redriveTargets) *awserr.Error {
	a, ok := parseArn(p.DeadLetterTargetArn)
	if !ok || a.service != "sqs" {
		return invalidValue(raw, AttrRedrivePolicy, "Invalid value for deadLetterTargetArn.")
	}
	target, ok := targets[p.DeadLetterTargetArn]
	if p.DeadLetterTargetArn == self && !create {
		target, ok = redriveTarget{fifo: next.fifo, allow: next.redriveAllow}, true
	}
	if !ok {
		return ErrInvalidParameterValue.New("Value %s for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist.", raw)
	}
	if target.fifo != next.fifo {
		return invalidValue(raw, AttrRedrivePolicy, "Dead-letter queue must be same type of queue as the source.")
	}
	if allow := target.allow; allow != nil {
		switch allow.Permission {
		case "denyAll":
			return invalidValue(raw, AttrRedrivePolicy, "Queue "+self+" is not allowed to use "+p.DeadLetterTargetArn+" as its dead-letter queue.")
		case "byQueue":
			found := false
			for _, s := range allow.SourceQueueArns {
				found = found || s == self
			}
			if !found {
				return invalidValue(raw, AttrRedrivePolicy, "Queue "+self+" is not allowed to use "+p.DeadLetterTargetArn+" as its dead-letter queue.")
			}
		}
	}
	return nil
}

func renderRedrive(p *RedrivePolicy) string {
	b, _ := json.Marshal(struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     int    `json:"maxReceiveCount"`
	}{p.DeadLetterTargetArn, p.MaxReceiveCount})
	return string(b)
}

func parseRedriveAllow(v string) (*RedriveAllowPolicy, *awserr.Error) {
	var raw struct {
		RedrivePermission string   `json:"redrivePermission"`
		SourceQueueArns   []string `json:"sourceQueueArns"`
	}
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return nil, invalidValue(v, AttrRedriveAllowPolicy, "Amazon SQS can't create the redrive allow policy, as it’s in an unsupported format.")
	}
	switch raw.RedrivePermission {
	case "allowAll", "denyAll":
		if len(raw.SourceQueueArns) > 0 {
			return nil, invalidValue(v, AttrRedriveAllowPolicy, "Amazon SQS can't create the redrive allow policy. To specify one or more source queues, you must set redrivePermission to byQueue.")
		}
	case "byQueue":
		if len(raw.SourceQueueArns) == 0 {
			return nil, invalidValue(v, AttrRedriveAllowPolicy, "Amazon SQS can't create the redrive allow policy. When you specify the byQueue permission type, you must also specify one or more sourceQueueArns values.")
		}
		if len(raw.SourceQueueArns) > 10 {
			return nil, invalidValue(v, AttrRedriveAllowPolicy, "Amazon SQS can't create the redrive allow policy. The maximum number of source queue ARNs you can specify is 10.")
		}
	default:
		return nil, invalidValue(v, AttrRedriveAllowPolicy, "Amazon SQS can't create the redrive allow policy, as it’s in an unsupported format.")
	}
	return &RedriveAllowPolicy{Permission: raw.RedrivePermission, SourceQueueArns: raw.SourceQueueArns}, nil
}

func renderRedriveAllow(p *RedriveAllowPolicy) string {
	v := struct {
		RedrivePermission string   `json:"redrivePermission"`
		SourceQueueArns   []string `json:"sourceQueueArns,omitempty"`
	}{p.Permission, p.SourceQueueArns}
	b, _ := json.Marshal(v)
	return string(b)
}

type arn struct {
	partition, service, region, account, resource string
}

// parseArn splits arn:<partition>:<service>:<region>:<account>:<resource>.
func parseArn(s string) (arn, bool) {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[5] == "" {
		return arn{}, false
	}
	return arn{parts[1], parts[2], parts[3], parts[4], parts[5]}, true
}
