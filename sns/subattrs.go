package sns

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/fanout/fanout/filter"
	"github.com/fanout/fanout/retrypolicy"
)

// Subscription attribute names, as AWS spells them.
// https://docs.aws.amazon.com/sns/latest/api/API_SetSubscriptionAttributes.html
const (
	AttrSubscriptionArn              = "SubscriptionArn"
	AttrProtocol                     = "Protocol"
	AttrEndpoint                     = "Endpoint"
	AttrSubscriptionPrincipal        = "SubscriptionPrincipal"
	AttrPendingConfirmation          = "PendingConfirmation"
	AttrConfirmationWasAuthenticated = "ConfirmationWasAuthenticated"
	AttrRawMessageDelivery           = "RawMessageDelivery"
	AttrFilterPolicy                 = "FilterPolicy"
	AttrFilterPolicyScope            = "FilterPolicyScope"
	AttrRedrivePolicy                = "RedrivePolicy"
	AttrSubscriptionRoleArn          = "SubscriptionRoleArn"
	AttrReplayPolicy                 = "ReplayPolicy"
	AttrReplayStatus                 = "ReplayStatus"
)

// subAttrOrder is the order in which Subscribe applies its attributes: the
// scope before the policy it scopes.
var subAttrOrder = []string{
	AttrRawMessageDelivery, AttrFilterPolicyScope, AttrFilterPolicy, AttrRedrivePolicy,
	AttrDeliveryPolicy, AttrSubscriptionRoleArn, AttrReplayPolicy,
}

func settableSubAttr(name string) bool {
	for _, n := range subAttrOrder {
		if n == name {
			return true
		}
	}
	return false
}

// subConfig is a subscription's settable attributes, parsed.
type subConfig struct {
	raw            bool
	filterText     string
	filter         *filter.Policy // nil: no filter policy
	scope          filter.Scope   // "" until set
	redrive        string
	dlq            string // the RedrivePolicy's deadLetterTargetArn
	deliveryPolicy *retrypolicy.SubscriptionPolicy
	roleArn        string
	replayText     string
	replay         *replayPolicy
	replayStatus   string
}

// subContext is what validating a subscription attribute needs to know.
type subContext struct {
	protocol, endpoint string
	fifoTopic          bool
	archiving          bool // the topic has an ArchivePolicy
	now                time.Time
}

// rawProtocols can take RawMessageDelivery.
// https://docs.aws.amazon.com/sns/latest/dg/sns-large-payload-raw-message-delivery.html
var rawProtocols = map[string]bool{"sqs": true, "http": true, "https": true, "firehose": true}

// set validates and applies one subscription attribute.
func (c *subConfig) set(name, v string, x subContext) *attrError {
	switch name {
	case AttrRawMessageDelivery:
		b, ok := parseBool(v)
		if !ok {
			return badValue(name, v, "true or false")
		}
		if b && !rawProtocols[x.protocol] {
			return &attrError{"Delivery protocol [" + x.protocol + "] does not support raw message delivery."}
		}
		c.raw = b
	case AttrFilterPolicyScope:
		scope, err := filter.ParseScope(v)
		if err != nil || v == "" {
			return &attrError{"FilterPolicyScope: Invalid value [" + v + "]. Please use either MessageBody or MessageAttributes"}
		}
		if c.filterText != "" {
			p, err := filter.Compile(c.filterText, scope)
			if err != nil {
				return filterError(err)
			}
			c.filter = p
		}
		c.scope = scope
	case AttrFilterPolicy:
		if strings.TrimSpace(v) == "" {
			c.filterText, c.filter = "", nil
			return nil
		}
		p, err := filter.Compile(v, c.scope)
		if err != nil {
			return filterError(err)
		}
		if p.IsEmpty() {
			c.filterText, c.filter = "", nil
			return nil
		}
		c.filterText, c.filter = v, p
	case AttrRedrivePolicy:
		if strings.TrimSpace(v) == "" {
			c.redrive, c.dlq = "", ""
			return nil
		}
		var rp struct {
			DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		}
		if json.Unmarshal([]byte(v), &rp) != nil {
			return &attrError{"RedrivePolicy: failed to parse JSON."}
		}
		a, err := parseArn(rp.DeadLetterTargetArn, "deadLetterTargetArn")
		if err != nil || a.service != "sqs" {
			return &attrError{"RedrivePolicy: deadLetterTargetArn is an invalid arn"}
		}
		if x.fifoTopic && strings.HasSuffix(x.endpoint, ".fifo") && !strings.HasSuffix(a.resource, ".fifo") {
			return &attrError{"RedrivePolicy: must use a FIFO queue as DLQ for a FIFO Subscription to a FIFO Topic."}
		}
		c.redrive, c.dlq = v, rp.DeadLetterTargetArn
	case AttrDeliveryPolicy:
		if !retrypolicy.IsHTTP(x.protocol) {
			return &attrError{"DeliveryPolicy: Delivery protocol [" + x.protocol + "] does not support delivery policy."}
		}
		p, err := retrypolicy.ParseSubscription(v)
		if err != nil {
			return &attrError{"DeliveryPolicy: " + err.(*retrypolicy.Error).Reason}
		}
		c.deliveryPolicy = p
	case AttrSubscriptionRoleArn:
		if x.protocol != "firehose" {
			return &attrError{"SubscriptionRoleArn: Delivery protocol [" + x.protocol + "] does not support SubscriptionRoleArn."}
		}
		if v != "" {
			if a, err := parseArn(v, "SubscriptionRoleArn"); err != nil || a.service != "iam" {
				return &attrError{"SubscriptionRoleArn: invalid arn"}
			}
		}
		c.roleArn = v
	case AttrReplayPolicy:
		if strings.TrimSpace(v) == "" {
			c.replayText, c.replay, c.replayStatus = "", nil, ""
			return nil
		}
		p, err := parseReplayPolicy(v, x)
		if err != nil {
			return err
		}
		c.replayText, c.replay, c.replayStatus = v, p, "Pending"
	default:
		return &attrError{"AttributeName"}
	}
	return nil
}

// filterError turns a filter package error into an attribute error; the
// filter package words it as AWS does.
func filterError(err error) *attrError {
	return &attrError{strings.TrimPrefix(err.Error(), "Invalid parameter: ")}
}

// render returns the value GetSubscriptionAttributes shows for a settable
// attribute, and whether it shows it.
func (c *subConfig) render(name string) (string, bool) {
	switch name {
	case AttrRawMessageDelivery:
		if c.raw {
			return "true", true
		}
		return "false", true
	case AttrFilterPolicy:
		return c.filterText, c.filter != nil
	case AttrFilterPolicyScope:
		// Shown once there is a filter policy to scope.
		if c.filter == nil {
			return "", false
		}
		if c.scope == "" {
			return string(filter.ScopeAttributes), true
		}
		return string(c.scope), true
	case AttrRedrivePolicy:
		return c.redrive, c.redrive != ""
	case AttrDeliveryPolicy:
		if c.deliveryPolicy == nil {
			return "", false
		}
		return c.deliveryPolicy.JSON(), true
	case AttrSubscriptionRoleArn:
		return c.roleArn, c.roleArn != ""
	case AttrReplayPolicy:
		return c.replayText, c.replay != nil
	case AttrReplayStatus:
		return c.replayStatus, c.replayStatus != ""
	}
	return "", false
}
