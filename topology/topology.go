// Package topology is fanout's "topology as code": one YAML or JSON file
// that declares queues, topics and subscriptions. Parse reads it with the
// position of every key, Validate checks it with the engines' own rules,
// Apply creates (and updates, and with Prune removes) what it declares on
// running engines, and Export reads running engines back into the same form.
//
// A file looks like this:
//
//	queues:
//	  orders-dlq: {}
//	  billing:
//	    attributes: {VisibilityTimeout: 45}
//	    redrive: {deadLetterQueue: orders-dlq, maxReceiveCount: 3}
//	topics:
//	  orders:
//	    subscriptions:
//	      - queue: billing
//	        filterPolicy: {event_type: [order_placed]}
//
// Names refer to queues of the same file, in the server's account and
// region; an ARN may be written anywhere a name may.
//
// Other accounts and regions have their own section, each with queues and
// topics whose names resolve in that account and region (a file without
// one is the default namespace alone, as before):
//
//	namespaces:
//	  - account: "111111111111"
//	    region: eu-west-1
//	    queues:
//	      billing: {}
package topology

import (
	"fmt"
	"strings"
)

// Topology is the content of one file.
type Topology struct {
	// Queues by queue name. A name ending in .fifo is a FIFO queue.
	Queues map[string]Queue `json:"queues,omitempty" yaml:"queues,omitempty"`
	// Topics by topic name. A name ending in .fifo is a FIFO topic.
	Topics map[string]Topic `json:"topics,omitempty" yaml:"topics,omitempty"`
	// Namespaces are the queues and topics of other accounts and regions
	// than the server's default (Queues and Topics above).
	Namespaces []Namespace `json:"namespaces,omitempty" yaml:"namespaces,omitempty"`

	src *source // set by Parse: where each key was
}

// Namespace is the queues and topics of one account and region: names in
// it refer to queues of that account and region.
type Namespace struct {
	// Account is a 12-digit account id; Region a region name. Either
	// defaults to the server's (Options.Account, Options.Region).
	Account string           `json:"account,omitempty" yaml:"account,omitempty"`
	Region  string           `json:"region,omitempty" yaml:"region,omitempty"`
	Queues  map[string]Queue `json:"queues,omitempty" yaml:"queues,omitempty"`
	Topics  map[string]Topic `json:"topics,omitempty" yaml:"topics,omitempty"`
}

// Queue is one SQS queue.
type Queue struct {
	// Attributes under SQS's own names (VisibilityTimeout, DelaySeconds,
	// ...). Values are strings, numbers, booleans, or, for the JSON
	// documents (Policy, RedrivePolicy, RedriveAllowPolicy), objects.
	Attributes map[string]any `json:"attributes,omitempty" yaml:"attributes,omitempty"`
	// Redrive is the short form of the RedrivePolicy attribute.
	Redrive *Redrive `json:"redrive,omitempty" yaml:"redrive,omitempty"`
	// Policy is the queue's access policy document (an object or a JSON string).
	Policy any               `json:"policy,omitempty" yaml:"policy,omitempty"`
	Tags   map[string]string `json:"tags,omitempty" yaml:"tags,omitempty"`
}

// Redrive names a dead-letter queue. MaxReceiveCount applies to a queue's
// redrive only; a subscription's redrive names the queue alone.
type Redrive struct {
	// DeadLetterQueue is a queue name of this file, or a queue ARN.
	DeadLetterQueue string `json:"deadLetterQueue" yaml:"deadLetterQueue"`
	MaxReceiveCount int    `json:"maxReceiveCount,omitempty" yaml:"maxReceiveCount,omitempty"`
}

// Topic is one SNS topic.
type Topic struct {
	// Attributes under SNS's own names (DisplayName, DeliveryPolicy,
	// ContentBasedDeduplication, ArchivePolicy, FifoThroughputScope, ...).
	Attributes map[string]any `json:"attributes,omitempty" yaml:"attributes,omitempty"`
	// Policy is the topic's access policy document.
	Policy        any               `json:"policy,omitempty" yaml:"policy,omitempty"`
	Tags          map[string]string `json:"tags,omitempty" yaml:"tags,omitempty"`
	Subscriptions []Subscription    `json:"subscriptions,omitempty" yaml:"subscriptions,omitempty"`
}

// Subscription is one subscription of a topic. Exactly one endpoint is
// given: one of the short forms (Queue, HTTP, ...) or Protocol and Endpoint.
type Subscription struct {
	// Queue is a queue name of this file or a queue ARN (protocol sqs).
	Queue string `json:"queue,omitempty" yaml:"queue,omitempty"`
	HTTP  string `json:"http,omitempty" yaml:"http,omitempty"`
	HTTPS string `json:"https,omitempty" yaml:"https,omitempty"`
	// Lambda is a function name (in the server's account and region) or ARN.
	Lambda      string `json:"lambda,omitempty" yaml:"lambda,omitempty"`
	Email       string `json:"email,omitempty" yaml:"email,omitempty"`
	EmailJSON   string `json:"email-json,omitempty" yaml:"email-json,omitempty"`
	SMS         string `json:"sms,omitempty" yaml:"sms,omitempty"`
	Firehose    string `json:"firehose,omitempty" yaml:"firehose,omitempty"`
	Application string `json:"application,omitempty" yaml:"application,omitempty"`
	// Protocol and Endpoint are the long form, as Subscribe takes them.
	Protocol string `json:"protocol,omitempty" yaml:"protocol,omitempty"`
	Endpoint string `json:"endpoint,omitempty" yaml:"endpoint,omitempty"`

	FilterPolicy        any      `json:"filterPolicy,omitempty" yaml:"filterPolicy,omitempty"`
	FilterPolicyScope   string   `json:"filterPolicyScope,omitempty" yaml:"filterPolicyScope,omitempty"`
	Raw                 bool     `json:"raw,omitempty" yaml:"raw,omitempty"`
	DeliveryPolicy      any      `json:"deliveryPolicy,omitempty" yaml:"deliveryPolicy,omitempty"`
	Redrive             *Redrive `json:"redrive,omitempty" yaml:"redrive,omitempty"`
	ReplayPolicy        any      `json:"replayPolicy,omitempty" yaml:"replayPolicy,omitempty"`
	SubscriptionRoleArn string   `json:"subscriptionRoleArn,omitempty" yaml:"subscriptionRoleArn,omitempty"`
}

// Error is one problem with a file: where it is and what is wrong, in the
// words the AWS API would use where the API has a rule for it.
type Error struct {
	File   string // empty for a Topology built in Go
	Line   int    // 1-based; 0 when unknown
	Column int
	// Path is the key's path, e.g. topics.orders.subscriptions[1].filterPolicy.
	Path    string
	Message string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:%d:", e.Line, e.Column)
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	return b.String()
}

// Errors is every problem found, in file order where positions are known.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}
