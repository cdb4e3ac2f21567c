package delivery

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/fanout/fanout/internal/iampolicy"
)

// A queue policy decides whether SNS may send to the queue. AWS requires a
// statement allowing sqs:SendMessage to the service principal
// sns.amazonaws.com (or everyone), usually limited to the topic by an
// aws:SourceArn condition; an explicit Deny wins.
// https://docs.aws.amazon.com/sns/latest/dg/subscribe-sqs-queue-to-sns-topic.html

// policyDoc is an IAM policy document, as much of it as this check reads.
type policyDoc struct {
	Statement iampolicy.OneOrMore[statement] `json:"Statement"`
}

type statement struct {
	Sid       string                                            `json:"Sid"`
	Effect    string                                            `json:"Effect"`
	Principal json.RawMessage                                   `json:"Principal"`
	Action    iampolicy.OneOrMore[string]                       `json:"Action"`
	Resource  iampolicy.OneOrMore[string]                       `json:"Resource"`
	Condition map[string]map[string]iampolicy.OneOrMore[string] `json:"Condition"`
	// Statements written with NotPrincipal or NotAction are not evaluated:
	// they never grant SNS access here.
	NotPrincipal json.RawMessage `json:"NotPrincipal"`
	NotAction    json.RawMessage `json:"NotAction"`
}

// policyCache keeps parsed policies by their text: a queue's policy rarely
// changes, while every delivery needs it.
type policyCache struct {
	mu   sync.Mutex
	docs map[string]*policyDoc
}

const policyCacheSize = 256

func (c *policyCache) parse(text string) (*policyDoc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.docs[text]; ok {
		return d, nil
	}
	var d policyDoc
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		return nil, err
	}
	if c.docs == nil || len(c.docs) >= policyCacheSize {
		c.docs = map[string]*policyDoc{}
	}
	c.docs[text] = &d
	return &d, nil
}

// allows reports whether a queue policy lets topicArn send to queueArn, and
// if not, why.
func (c *policyCache) allows(policy, queueArn, topicArn string) (bool, string) {
	if strings.TrimSpace(policy) == "" {
		return false, "the queue has no policy allowing sns.amazonaws.com to sqs:SendMessage"
	}
	doc, err := c.parse(policy)
	if err != nil {
		return false, "the queue policy is not valid JSON"
	}
	allowed := false
	for _, s := range doc.Statement {
		if !s.applies(queueArn, topicArn) {
			continue
		}
		switch s.Effect {
		case "Deny":
			return false, fmt.Sprintf("statement %q denies it", s.Sid)
		case "Allow":
			allowed = true
		}
	}
	if !allowed {
		return false, "no statement allows sns.amazonaws.com to sqs:SendMessage from " + topicArn
	}
	return true, ""
}

// applies reports whether the statement covers SNS sending topicArn's
// messages to queueArn.
func (s statement) applies(queueArn, topicArn string) bool {
	if len(s.NotPrincipal) > 0 || len(s.NotAction) > 0 {
		return false
	}
	if !principalIsSNS(s.Principal) {
		return false
	}
	if !anyMatch(s.Action, "sqs:SendMessage", true) {
		return false
	}
	if len(s.Resource) > 0 && !anyMatch(s.Resource, queueArn, false) {
		return false
	}
	return conditionsHold(s.Condition, topicArn)
}

// principalIsSNS accepts "*", {"AWS":"*"} and {"Service":"sns.amazonaws.com"}.
func principalIsSNS(raw json.RawMessage) bool {
	var star string
	if json.Unmarshal(raw, &star) == nil {
		return star == "*"
	}
	var p struct {
		AWS     iampolicy.OneOrMore[string] `json:"AWS"`
		Service iampolicy.OneOrMore[string] `json:"Service"`
	}
	if json.Unmarshal(raw, &p) != nil {
		return false
	}
	for _, a := range p.AWS {
		if a == "*" {
			return true
		}
	}
	for _, svc := range p.Service {
		if svc == "sns.amazonaws.com" {
			return true
		}
	}
	return false
}

// anyMatch reports whether one of the patterns (with IAM's * and ?
// wildcards) matches v; actions compare case-insensitively.
func anyMatch(patterns []string, v string, fold bool) bool {
	if fold {
		v = strings.ToLower(v)
	}
	for _, p := range patterns {
		if fold {
			p = strings.ToLower(p)
		}
		if wildcard(p, v) {
			return true
		}
	}
	return false
}

// wildcard matches IAM's * and ? wildcards; nothing else is special.
func wildcard(pattern, v string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == v
	}
	// path.Match treats [ and \ specially and * does not cross /; neither
	// appears in ARNs or action names in a way that matters, but escape
	// them to be exact.
	esc := strings.NewReplacer(`\`, `\\`, `[`, `\[`).Replace(pattern)
	esc = strings.ReplaceAll(esc, "/", "\x00")
	ok, err := path.Match(esc, strings.ReplaceAll(v, "/", "\x00"))
	return err == nil && ok
}

// conditionsHold evaluates the conditions SNS deliveries carry context for:
// aws:SourceArn (the topic) and aws:SourceAccount (its account), under
// ArnEquals, ArnLike, StringEquals and StringLike. Any other condition
// cannot be shown to hold, so the statement does not apply.
func conditionsHold(cond map[string]map[string]iampolicy.OneOrMore[string], topicArn string) bool {
	account := ""
	if parts := strings.SplitN(topicArn, ":", 6); len(parts) == 6 {
		account = parts[4]
	}
	for op, keys := range cond {
		for key, values := range keys {
			var actual string
			switch strings.ToLower(key) {
			case "aws:sourcearn":
				actual = topicArn
			case "aws:sourceaccount":
				actual = account
			default:
				return false
			}
			like := false
			switch op {
			case "ArnEquals", "StringEquals":
			case "ArnLike", "StringLike":
				like = true
			default:
				return false
			}
			matched := false
			for _, v := range values {
				if (like && wildcard(v, actual)) || (!like && v == actual) {
					matched = true
					break
				}
			}
			if !matched {
				return false
			}
		}
	}
	return true
}
