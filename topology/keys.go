package topology

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// The keys each object of the format takes; the JSON Schema lists the same
// (a test holds them together).
var (
	rootKeys         = []string{"queues", "topics", "namespaces"}
	namespaceKeys    = []string{"account", "region", "queues", "topics"}
	queueKeys        = []string{"attributes", "redrive", "policy", "tags"}
	redriveKeys      = []string{"deadLetterQueue", "maxReceiveCount"}
	topicKeys        = []string{"attributes", "policy", "tags", "subscriptions"}
	endpointKeys     = []string{"queue", "http", "https", "lambda", "email", "email-json", "sms", "firehose", "application"}
	subscriptionKeys = append(append([]string{}, endpointKeys...),
		"protocol", "endpoint", "filterPolicy", "filterPolicyScope", "raw",
		"deliveryPolicy", "redrive", "replayPolicy", "subscriptionRoleArn")
)

// attrType is what kind of value an attribute takes.
type attrType int

const (
	textAttr attrType = iota
	intAttr
	boolAttr
	docAttr // a JSON document: an object in the file, or its JSON text
)

// queueAttrs are the attributes CreateQueue and SetQueueAttributes take.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html
var queueAttrs = map[string]attrType{
	"DelaySeconds": intAttr, "MaximumMessageSize": intAttr, "MessageRetentionPeriod": intAttr,
	"ReceiveMessageWaitTimeSeconds": intAttr, "VisibilityTimeout": intAttr,
	"Policy": docAttr, "RedrivePolicy": docAttr, "RedriveAllowPolicy": docAttr,
	"KmsMasterKeyId": textAttr, "KmsDataKeyReusePeriodSeconds": intAttr, "SqsManagedSseEnabled": boolAttr,
	"FifoQueue": boolAttr, "ContentBasedDeduplication": boolAttr,
	"DeduplicationScope": textAttr, "FifoThroughputLimit": textAttr,
}

// topicAttrs are the attributes CreateTopic and SetTopicAttributes take.
// https://docs.aws.amazon.com/sns/latest/api/API_SetTopicAttributes.html
var topicAttrs = func() map[string]attrType {
	m := map[string]attrType{
		"DisplayName": textAttr, "Policy": docAttr, "DeliveryPolicy": docAttr,
		"KmsMasterKeyId": textAttr, "SignatureVersion": textAttr, "TracingConfig": textAttr,
		"FifoTopic": boolAttr, "ContentBasedDeduplication": boolAttr, "FifoThroughputScope": textAttr,
		"ArchivePolicy": docAttr, "MaximumMessageSize": intAttr,
	}
	// Delivery-status logging, per protocol.
	for _, p := range []string{"HTTP", "Lambda", "SQS", "Firehose", "Application"} {
		m[p+"SuccessFeedbackRoleArn"] = textAttr
		m[p+"FailureFeedbackRoleArn"] = textAttr
		m[p+"SuccessFeedbackSampleRate"] = intAttr
	}
	return m
}()

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// attrString renders a value of the file as the string the AWS API takes:
// JSON text for documents, decimal for numbers, true/false for booleans.
func attrString(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e15 {
			return strconv.FormatInt(int64(x), 10), nil
		}
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case json.RawMessage:
		return string(x), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("cannot be written as JSON: %v", err)
	}
	return string(b), nil
}

// closest is the candidate nearest to s by edit distance, if near enough to
// be a likely typo.
func closest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := distance(lower(s), lower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= max(2, len(s)/3) {
		return best
	}
	return ""
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
