// Package goaws converts a goaws configuration file (its documented YAML:
// environments such as Local, each with Queues, Topics and their
// Subscriptions) into a fanout topology.
package goaws

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fanout/fanout/topology"
)

// The shape of a goaws environment, as its documentation and sample
// configuration show it.
type environment struct {
	Region                 string     `yaml:"Region"`
	AccountID              string     `yaml:"AccountId"`
	QueueAttributeDefaults Attributes `yaml:"QueueAttributeDefaults"`
	Queues                 []queue    `yaml:"Queues"`
	Topics                 []topic    `yaml:"Topics"`
}

// Attributes are the queue attributes goaws reads (exported only for
// the YAML decoder, which fills embedded fields that are).
type Attributes struct {
	VisibilityTimeout             int `yaml:"VisibilityTimeout"`
	ReceiveMessageWaitTimeSeconds int `yaml:"ReceiveMessageWaitTimeSeconds"`
	MaximumMessageSize            int `yaml:"MaximumMessageSize"`
	MessageRetentionPeriod        int `yaml:"MessageRetentionPeriod"`
	DelaySeconds                  int `yaml:"DelaySeconds"`
}

type queue struct {
	Name          string `yaml:"Name"`
	Attributes    `yaml:",inline"`
	RedrivePolicy string `yaml:"RedrivePolicy"`
}

type topic struct {
	Name          string         `yaml:"Name"`
	Subscriptions []subscription `yaml:"Subscriptions"`
}

type subscription struct {
	QueueName    string `yaml:"QueueName"`
	Raw          bool   `yaml:"Raw"`
	FilterPolicy string `yaml:"FilterPolicy"`
	Protocol     string `yaml:"Protocol"`
	EndPoint     string `yaml:"EndPoint"`
}

// Convert reads a goaws configuration and converts one of its environments:
// env, or Local, or the only one there is. The notes say what fanout takes
// elsewhere (the region and account are flags) or does not take.
func Convert(data []byte, env string) (*topology.Topology, []string, error) {
	var envs map[string]environment
	if err := yaml.Unmarshal(data, &envs); err != nil {
		return nil, nil, fmt.Errorf("not a goaws configuration: %w", err)
	}
	if len(envs) == 0 {
		return nil, nil, fmt.Errorf("not a goaws configuration: no environment (such as Local:) in it")
	}
	if env == "" {
		if _, ok := envs["Local"]; ok || len(envs) != 1 {
			env = "Local" // what goaws itself starts without an argument
		} else {
			for name := range envs {
				env = name
			}
		}
	}
	e, ok := envs[env]
	if !ok {
		names := make([]string, 0, len(envs))
		for n := range envs {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, nil, fmt.Errorf("no environment %q in the file (it has %s)", env, strings.Join(names, ", "))
	}
	var notes []string
	if e.Region != "" && e.Region != "us-east-1" {
		notes = append(notes, fmt.Sprintf("goaws used region %s: start fanout with --region %s for the same ARNs", e.Region, e.Region))
	}
	if e.AccountID != "" && e.AccountID != "000000000000" {
		notes = append(notes, fmt.Sprintf("goaws used account %s: start fanout with --account %s for the same ARNs and URLs", e.AccountID, e.AccountID))
	}
	t := &topology.Topology{Queues: map[string]topology.Queue{}}
	for _, q := range e.Queues {
		if q.Name == "" {
			return nil, nil, fmt.Errorf("a queue without a Name")
		}
		out := topology.Queue{Attributes: merge(q.Attributes, e.QueueAttributeDefaults)}
		if q.RedrivePolicy != "" {
			r, err := redrive(q.RedrivePolicy)
			if err != nil {
				return nil, nil, fmt.Errorf("queue %s: RedrivePolicy: %w", q.Name, err)
			}
			out.Redrive = r
		}
		t.Queues[q.Name] = out
	}
	for _, tp := range e.Topics {
		if tp.Name == "" {
			return nil, nil, fmt.Errorf("a topic without a Name")
		}
		out := topology.Topic{}
		for _, s := range tp.Subscriptions {
			sub := topology.Subscription{Raw: s.Raw}
			switch {
			case s.QueueName != "":
				sub.Queue = s.QueueName
				if _, declared := t.Queues[s.QueueName]; !declared {
					// goaws creates a subscription's queue when it is not declared.
					t.Queues[s.QueueName] = topology.Queue{Attributes: merge(Attributes{}, e.QueueAttributeDefaults)}
				}
			case s.Protocol != "" && s.EndPoint != "":
				sub.Protocol, sub.Endpoint = s.Protocol, s.EndPoint
			default:
				return nil, nil, fmt.Errorf("topic %s: a subscription with neither QueueName nor Protocol and EndPoint", tp.Name)
			}
			if s.FilterPolicy != "" {
				var doc any
				if json.Unmarshal([]byte(s.FilterPolicy), &doc) == nil {
					sub.FilterPolicy = doc
				} else {
					sub.FilterPolicy = s.FilterPolicy // as written: fanout's validation says what is wrong
				}
			}
			out.Subscriptions = append(out.Subscriptions, sub)
		}
		if t.Topics == nil {
			t.Topics = map[string]topology.Topic{}
		}
		t.Topics[tp.Name] = out
	}
	if len(t.Queues) == 0 {
		t.Queues = nil
	}
	return t, notes, nil
}

// merge is a queue's attributes over the environment's defaults, without
// the zeros goaws reads as "not set".
func merge(q, defaults Attributes) map[string]any {
	out := map[string]any{}
	set := func(name string, v, def int) {
		if v == 0 {
			v = def
		}
		if v != 0 {
			out[name] = v
		}
	}
	set("VisibilityTimeout", q.VisibilityTimeout, defaults.VisibilityTimeout)
	set("ReceiveMessageWaitTimeSeconds", q.ReceiveMessageWaitTimeSeconds, defaults.ReceiveMessageWaitTimeSeconds)
	set("MaximumMessageSize", q.MaximumMessageSize, defaults.MaximumMessageSize)
	set("MessageRetentionPeriod", q.MessageRetentionPeriod, defaults.MessageRetentionPeriod)
	set("DelaySeconds", q.DelaySeconds, defaults.DelaySeconds)
	if len(out) == 0 {
		return nil
	}
	return out
}

// redrive reads a goaws RedrivePolicy (AWS's JSON). goaws resolves its
// target by the ARN's last part, so fanout's redrive names that queue.
func redrive(v string) (*topology.Redrive, error) {
	var doc struct {
		DeadLetterTargetArn string          `json:"deadLetterTargetArn"`
		MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(v), &doc); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	name := doc.DeadLetterTargetArn[strings.LastIndexByte(doc.DeadLetterTargetArn, ':')+1:]
	if name == "" {
		return nil, fmt.Errorf("no deadLetterTargetArn")
	}
	n, err := strconv.Atoi(strings.Trim(string(doc.MaxReceiveCount), `"`))
	if err != nil {
		return nil, fmt.Errorf("maxReceiveCount %s is not a number", doc.MaxReceiveCount)
	}
	return &topology.Redrive{DeadLetterQueue: name, MaxReceiveCount: n}, nil
}
