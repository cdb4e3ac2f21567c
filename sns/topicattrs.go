package sns

import (
	"encoding/json"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/retrypolicy"
)

// Topic attribute names, as AWS spells them.
// https://docs.aws.amazon.com/sns/latest/api/API_SetTopicAttributes.html
const (
	AttrTopicArn                  = "TopicArn"
	AttrOwner                     = "Owner"
	AttrPolicy                    = "Policy"
	AttrDisplayName               = "DisplayName"
	AttrSubscriptionsConfirmed    = "SubscriptionsConfirmed"
	AttrSubscriptionsPending      = "SubscriptionsPending"
	AttrSubscriptionsDeleted      = "SubscriptionsDeleted"
	AttrDeliveryPolicy            = "DeliveryPolicy"
	AttrEffectiveDeliveryPolicy   = "EffectiveDeliveryPolicy"
	AttrKmsMasterKeyID            = "KmsMasterKeyId"
	AttrSignatureVersion          = "SignatureVersion"
	AttrTracingConfig             = "TracingConfig"
	AttrFifoTopic                 = "FifoTopic"
	AttrContentBasedDeduplication = "ContentBasedDeduplication"
	AttrFifoThroughputScope       = "FifoThroughputScope"
	AttrArchivePolicy             = "ArchivePolicy"
	AttrBeginningArchiveTime      = "BeginningArchiveTime"
	AttrMaximumMessageSize        = "MaximumMessageSize"
)

// Message size limits: 256 KiB unless the topic's MaximumMessageSize raises
// it, up to 1 MiB.
const (
	DefaultMaxMessageSize = 262144
	MaxMessageSize        = 1048576
	minMessageSize        = 1024
)

// feedbackAttr matches the delivery-status logging attributes, which fanout
// stores and echoes.
// https://docs.aws.amazon.com/sns/latest/dg/topics-attrib.html
var feedbackAttr = regexp.MustCompile(`^(HTTP|Lambda|SQS|Firehose|Application)(SuccessFeedbackRoleArn|FailureFeedbackRoleArn|SuccessFeedbackSampleRate)$`)

// topicConfig is a topic's settable attributes, parsed.
type topicConfig struct {
	displayName      string
	policy           string // "" means AWS's default policy
	deliveryPolicy   *retrypolicy.TopicPolicy
	kmsKeyID         string
	signatureVersion string // "" means 1, and is not returned
	tracing          string // "" is PassThrough, and is not returned
	contentDedup     bool
	throughputScope  string // FIFO; "" is not returned
	archive          *archivePolicy
	archiveSince     time.Time // BeginningArchiveTime
	maxSize          int       // 0 means DefaultMaxMessageSize, not returned
	feedback         map[string]string
}

func (c topicConfig) clone() topicConfig {
	c.feedback = maps.Clone(c.feedback)
	return c
}

func (c topicConfig) sigVersion() string {
	if c.signatureVersion == "" {
		return "1"
	}
	return c.signatureVersion
}

func (c topicConfig) messageLimit() int {
	if c.maxSize == 0 {
		return DefaultMaxMessageSize
	}
	return c.maxSize
}

// attrError is an invalid attribute. reason follows "Invalid parameter: " in
// Set*Attributes errors, and "Invalid parameter: Attributes Reason: " in
// CreateTopic and Subscribe errors.
type attrError struct{ reason string }

func (e *attrError) Error() string { return e.reason }

func badValue(name, value, must string) *attrError {
	return &attrError{name + ": Invalid value [" + value + "]. Must be " + must + "."}
}

// set validates and applies one attribute. now stamps BeginningArchiveTime.
func (c *topicConfig) set(name, v string, fifo bool, now time.Time) *attrError {
	switch name {
	case AttrDisplayName:
		c.displayName = v
	case AttrPolicy:
		if strings.TrimSpace(v) == "" {
			c.policy = ""
			return nil
		}
		var doc map[string]json.RawMessage
		if json.Unmarshal([]byte(v), &doc) != nil {
			return &attrError{"Policy Error: null"}
		}
		c.policy = v
	case AttrDeliveryPolicy:
		p, err := retrypolicy.ParseTopic(v)
		if err != nil {
			return &attrError{"DeliveryPolicy: " + err.(*retrypolicy.Error).Reason}
		}
		c.deliveryPolicy = p
	case AttrKmsMasterKeyID:
		c.kmsKeyID = v
	case AttrSignatureVersion:
		if v != "1" && v != "2" {
			return badValue(name, v, "1 or 2")
		}
		c.signatureVersion = v
	case AttrTracingConfig:
		if v != "PassThrough" && v != "Active" {
			return badValue(name, v, "PassThrough or Active")
		}
		c.tracing = v
	case AttrContentBasedDeduplication:
		if !fifo {
			return &attrError{"ContentBasedDeduplication: Content-based deduplication can only be set for FIFO topics"}
		}
		b, ok := parseBool(v)
		if !ok {
			return badValue(name, v, "true or false")
		}
		c.contentDedup = b
	case AttrFifoThroughputScope:
		if !fifo {
			return &attrError{"FifoThroughputScope: can only be set for FIFO topics"}
		}
		if v != "Topic" && v != "MessageGroup" {
			return badValue(name, v, "Topic or MessageGroup")
		}
		c.throughputScope = v
	case AttrArchivePolicy:
		if !fifo {
			return &attrError{"ArchivePolicy: message archiving is only available for FIFO topics"}
		}
		p, err := parseArchivePolicy(v)
		if err != nil {
			return err
		}
		if p == nil {
			c.archive, c.archiveSince = nil, time.Time{}
		} else {
			if c.archive == nil {
				c.archiveSince = now
			}
			c.archive = p
		}
	case AttrMaximumMessageSize:
		n, err := strconv.Atoi(v)
		if err != nil || n < minMessageSize || n > MaxMessageSize {
			return badValue(name, v, "an integer from 1024 to 1048576")
		}
		c.maxSize = n
	default:
		if !feedbackAttr.MatchString(name) {
			return &attrError{"AttributeName"}
		}
		if strings.HasSuffix(name, "SampleRate") {
			if n, err := strconv.Atoi(v); err != nil || n < 0 || n > 100 {
				return badValue(name, v, "an integer from 0 to 100")
			}
		}
		if c.feedback == nil {
			c.feedback = map[string]string{}
		}
		if v == "" {
			delete(c.feedback, name)
		} else {
			c.feedback[name] = v
		}
	}
	return nil
}

// render returns the value GetTopicAttributes shows for a settable
// attribute, and whether it shows it at all.
func (c *topicConfig) render(name, arn, account string, fifo bool) (string, bool) {
	switch name {
	case AttrDisplayName:
		return c.displayName, true
	case AttrPolicy:
		if c.policy == "" {
			return defaultPolicy(arn, account), true
		}
		return c.policy, true
	case AttrDeliveryPolicy:
		if c.deliveryPolicy == nil {
			return "", false
		}
		return c.deliveryPolicy.JSON(), true
	case AttrEffectiveDeliveryPolicy:
		return c.deliveryPolicy.EffectiveJSON(), true
	case AttrKmsMasterKeyID:
		return c.kmsKeyID, c.kmsKeyID != ""
	case AttrSignatureVersion:
		return c.signatureVersion, c.signatureVersion != ""
	case AttrTracingConfig:
		return c.tracing, c.tracing != ""
	case AttrContentBasedDeduplication:
		return strconv.FormatBool(c.contentDedup), fifo
	case AttrFifoThroughputScope:
		return c.throughputScope, c.throughputScope != ""
	case AttrArchivePolicy:
		if c.archive == nil {
			return "", false
		}
		return c.archive.json(), true
	case AttrBeginningArchiveTime:
		if c.archive == nil {
			return "", false
		}
		return c.archiveSince.UTC().Format(delivery.TimeFormat), true
	case AttrMaximumMessageSize:
		return strconv.Itoa(c.maxSize), c.maxSize != 0
	}
	v, ok := c.feedback[name]
	return v, ok
}

// settable lists the attributes render knows, in no particular order.
var settable = []string{
	AttrDisplayName, AttrPolicy, AttrDeliveryPolicy, AttrEffectiveDeliveryPolicy, AttrKmsMasterKeyID,
	AttrSignatureVersion, AttrTracingConfig, AttrContentBasedDeduplication, AttrFifoThroughputScope,
	AttrArchivePolicy, AttrBeginningArchiveTime, AttrMaximumMessageSize,
}

// parseBool accepts true and false in any case, as AWS does for its boolean
// attributes.
func parseBool(v string) (bool, bool) {
	switch strings.ToLower(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// defaultPolicy is the access policy AWS gives a new topic: its own account
// may do everything with it.
func defaultPolicy(arn, account string) string {
	return `{"Version":"2008-10-17","Id":"__default_policy_ID","Statement":[{"Sid":"__default_statement_ID","Effect":"Allow","Principal":{"AWS":"*"},"Action":["SNS:GetTopicAttributes","SNS:SetTopicAttributes","SNS:AddPermission","SNS:RemovePermission","SNS:DeleteTopic","SNS:Subscribe","SNS:ListSubscriptionsByTopic","SNS:Publish"],"Resource":"` +
		arn + `","Condition":{"StringEquals":{"AWS:SourceOwner":"` + account + `"}}}]}`
}
