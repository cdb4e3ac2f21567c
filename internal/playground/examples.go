package playground

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/fanout/fanout/filter"
)

// Example is one case the page offers in its examples list. Most come from
// the worked cases of the project's filter-policy spec (section 6), which
// were taken from the SNS developer guide or recorded against AWS; Expect
// is the outcome AWS gives, and a test holds the engine to it.
type Example struct {
	Name       string       `json:"name"`
	Scope      filter.Scope `json:"scope"`
	Policy     string       `json:"policy"`
	Message    string       `json:"message"`
	Attributes string       `json:"attributes"` // AWS CLI --message-attributes JSON
	Expect     string       `json:"expect"`     // "match", "no match" or "invalid"
	Source     string       `json:"source"`
}

// Outcomes an Example can expect.
const (
	ExpectMatch   = "match"
	ExpectNoMatch = "no match"
	ExpectInvalid = "invalid"
)

// Sources cited by the examples.
const (
	srcGuide    = "SNS developer guide (spec case %s)"
	srcRecorded = "recorded against AWS (spec case %s)"
	srcOperator = "spec, operator table"
)

// attributeMessage is the body shown for MessageAttributes examples, where
// the body plays no part.
const attributeMessage = "Hello from the playground (the body is not looked at in MessageAttributes scope)"

// Examples returns the page's examples, in the order it lists them.
func Examples() []Example {
	list := []Example{
		{
			Name: "Exact string values", Scope: filter.ScopeAttributes, Expect: ExpectMatch, Source: cite(srcGuide, "1"),
			Policy:     `{"customer_interests": ["rugby", "tennis"]}`,
			Attributes: attr("customer_interests", "String", "rugby"),
		},
		{
			Name: "String.Array attribute: any element", Scope: filter.ScopeAttributes, Expect: ExpectNoMatch, Source: cite(srcGuide, "4"),
			Policy:     `{"customer_interests": ["rugby", "tennis"]}`,
			Attributes: attr("customer_interests", "String.Array", `["baseball"]`),
		},
		{
			Name: "Prefix", Scope: filter.ScopeAttributes, Expect: ExpectMatch, Source: cite(srcGuide, "6"),
			Policy:     `{"customer_interests": [{"prefix": "bas"}]}`,
			Attributes: attr("customer_interests", "String", "basketball"),
		},
		{
			Name: "Suffix", Scope: filter.ScopeAttributes, Expect: ExpectNoMatch, Source: srcOperator,
			Policy:     `{"customer_interests": [{"suffix": "ball"}]}`,
			Attributes: attr("customer_interests", "String", "rugby"),
		},
		{
			Name: "Equals-ignore-case", Scope: filter.ScopeAttributes, Expect: ExpectMatch, Source: srcOperator,
			Policy:     `{"customer_interests": [{"equals-ignore-case": "RuGbY"}]}`,
			Attributes: attr("customer_interests", "String", "rugby"),
		},
		{
			Name: "Numeric range", Scope: filter.ScopeAttributes, Expect: ExpectMatch, Source: cite(srcGuide, "21"),
			Policy:     `{"price_usd": [{"numeric": [">", 0, "<=", 150]}]}`,
			Attributes: attr("price_usd", "Number", "150"),
		},
		{
			Name: "Numeric equality, any notation", Scope: filter.ScopeAttributes, Expect: ExpectMatch, Source: cite(srcGuide, "16"),
			Policy:     `{"price_usd": [{"numeric": ["=", 301.5]}]}`,
			Attributes: attr("price_usd", "Number", "3.015e2"),
		},
		{
			Name: "Anything-but a list", Scope: filter.ScopeAttributes, Expect: ExpectNoMatch, Source: cite(srcGuide, "9"),
			Policy:     `{"customer_interests": [{"anything-but": ["rugby", "tennis"]}]}`,
			Attributes: attr("customer_interests", "String", "rugby"),
		},
		{
			Name: "Anything-but a prefix", Scope: filter.ScopeAttributes, Expect: ExpectMatch, Source: cite(srcGuide, "12"),
			Policy:     `{"event": [{"anything-but": {"prefix": "order-"}}]}`,
			Attributes: attr("event", "String", "order_number"),
		},
		{
			Name: "Exists: the attribute is present", Scope: filter.ScopeAttributes, Expect: ExpectMatch, Source: cite(srcRecorded, "26"),
			Policy:     `{"store": [{"exists": true}]}`,
			Attributes: "{\n  \"store\": {\"DataType\": \"Number\", \"StringValue\": \"99\"},\n  \"def\": {\"DataType\": \"Number\", \"StringValue\": \"99\"}\n}",
		},
		{
			Name: "Exists false: the attribute is absent", Scope: filter.ScopeAttributes, Expect: ExpectNoMatch, Source: cite(srcRecorded, "29"),
			Policy:     `{"store": [{"exists": false}]}`,
			Attributes: "{\n  \"store\": {\"DataType\": \"Number\", \"StringValue\": \"99\"},\n  \"def\": {\"DataType\": \"Number\", \"StringValue\": \"99\"}\n}",
		},
		{
			Name: "IP address in a CIDR block", Scope: filter.ScopeAttributes, Expect: ExpectMatch, Source: cite(srcGuide, "14"),
			Policy:     `{"source_ip": [{"cidr": "10.0.0.0/24"}]}`,
			Attributes: attr("source_ip", "String", "10.0.0.255"),
		},
		{
			Name: "Body: nested keys, prefix and exists", Scope: filter.ScopeBody, Expect: ExpectMatch, Source: cite(srcRecorded, "33"),
			Policy:  "{\n  \"object\": {\n    \"key\": [{\"prefix\": \"auto-\"}, \"hardcodedvalue\"],\n    \"nested_key\": [{\"exists\": false}]\n  },\n  \"test\": [{\"exists\": false}]\n}",
			Message: `{"object": {"key": "auto-test"}}`,
		},
		{
			Name: "Body: a key that must be absent is present", Scope: filter.ScopeBody, Expect: ExpectNoMatch, Source: cite(srcRecorded, "37"),
			Policy:  "{\n  \"object\": {\n    \"key\": [{\"prefix\": \"auto-\"}, \"hardcodedvalue\"],\n    \"nested_key\": [{\"exists\": false}]\n  },\n  \"test\": [{\"exists\": false}]\n}",
			Message: `{"object": {"key": "auto-test", "nested_key": "just-exists"}}`,
		},
		{
			Name: "Body: $or at two levels", Scope: filter.ScopeBody, Expect: ExpectMatch, Source: cite(srcRecorded, "48"),
			Policy:  "{\n  \"$or\": [\n    {\"metricName\": [\"CPUUtilization\", \"ReadLatency\"]},\n    {\"namespace\": [\"AWS/EC2\", \"AWS/ES\"]}\n  ],\n  \"detail\": {\n    \"scope\": [\"Service\"],\n    \"$or\": [\n      {\"source\": [\"aws.cloudwatch\"]},\n      {\"type\": [\"CloudWatch Alarm State Change\"]}\n    ]\n  }\n}",
			Message: "{\n  \"namespace\": \"AWS/EC2\",\n  \"detail\": {\"scope\": \"Service\", \"source\": \"aws.cloudwatch\"}\n}",
		},
		{
			Name: "Body: arrays of objects (an S3 event)", Scope: filter.ScopeBody, Expect: ExpectNoMatch, Source: cite(srcRecorded, "47"),
			Policy:  "{\n  \"Records\": {\n    \"s3\": {\"object\": {\"key\": [{\"prefix\": \"auto-\"}]}},\n    \"eventName\": [{\"prefix\": \"ObjectCreated:\"}]\n  }\n}",
			Message: "{\n  \"Records\": [\n    {\n      \"eventName\": \"ObjectRemoved:Delete\",\n      \"s3\": {\"bucket\": {\"name\": \"claims\"}, \"object\": {\"key\": \"auto-insurance-2314.xml\"}}\n    }\n  ]\n}",
		},
		{
			Name: "Body: dotted key", Scope: filter.ScopeBody, Expect: ExpectMatch, Source: cite(srcRecorded, "41"),
			Policy:  `{"object.nested": ["string.value"]}`,
			Message: `{"object": {"nested": "string.value"}}`,
		},
		{
			Name: "Body: IPv6 CIDR inside $or", Scope: filter.ScopeBody, Expect: ExpectMatch, Source: cite(srcRecorded, "54"),
			Policy:  "{\n  \"detail\": {\n    \"$or\": [\n      {\"sourceIPAddress\": [{\"cidr\": \"10.0.0.0/24\"}]},\n      {\"sourceIPAddressV6\": [{\"cidr\": \"2001:db8:1234:1a00::/64\"}]}\n    ]\n  }\n}",
			Message: `{"detail": {"sourceIPAddressV6": "2001:0db8:1234:1a00:0000:0000:0000:0000"}}`,
		},
		{
			Name: "Invalid: numeric range upside down", Scope: filter.ScopeAttributes, Expect: ExpectInvalid, Source: "spec, error table",
			Policy:     `{"price": [{"numeric": [">", 3, "<", 1]}]}`,
			Attributes: attr("price", "Number", "2"),
		},
		{
			Name: "Invalid: nesting in MessageAttributes scope", Scope: filter.ScopeAttributes, Expect: ExpectInvalid, Source: "spec, error table",
			Policy:     `{"detail": {"state": ["alarm"]}}`,
			Attributes: attr("state", "String", "alarm"),
		},
	}
	for i := range list {
		if list[i].Scope == filter.ScopeAttributes && list[i].Message == "" {
			list[i].Message = attributeMessage
		}
	}
	return list
}

func cite(template, n string) string { return fmt.Sprintf(template, n) }

// attr writes one attribute in AWS CLI JSON, laid out for the page.
func attr(name, dataType, value string) string {
	return "{\n  " + quote(name) + ": {\"DataType\": " + quote(dataType) + ", \"StringValue\": " + quote(value) + "}\n}"
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// examples serves Examples as JSON.
func examples(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, Examples())
}
