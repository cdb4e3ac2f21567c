package filter

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Attribute constructors for the tables.
func str(v string) Attribute { return Attribute{DataType: "String", StringValue: v} }
func num(v string) Attribute { return Attribute{DataType: "Number", StringValue: v} }
func arr(v string) Attribute { return Attribute{DataType: "String.Array", StringValue: v} }
func bin(v []byte) Attribute { return Attribute{DataType: "Binary", BinaryValue: v} }
func typed(dt, v string) Attribute {
	return Attribute{DataType: dt, StringValue: v}
}

// attrs builds an attribute map from name, Attribute pairs.
func attrs(kv ...any) map[string]Attribute {
	m := map[string]Attribute{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(Attribute)
	}
	return m
}

type matchCase struct {
	name   string
	scope  Scope
	policy string
	body   string
	attrs  map[string]Attribute
	want   bool
}

const (
	A = ScopeAttributes
	B = ScopeBody
)

// s3Event builds an S3 notification with one record.
func s3Event(eventName, key string) string {
	return `{"Records":[{"eventVersion":"2.1","eventSource":"aws:s3","awsRegion":"eu-west-1","eventTime":"2024-05-14T16:50:00.000Z","eventName":"` + eventName + `","s3":{"s3SchemaVersion":"1.0","bucket":{"name":"bucket","arn":"arn:aws:s3:::bucket"},"object":{"key":"` + key + `","size":1024,"eTag":"abc"}}}]}`
}

const (
	specInterests   = `{"customer_interests":["rugby","tennis"]}`
	specAnythingBut = `{"customer_interests":[{"anything-but":["rugby","tennis"]}]}`
	specPriceAB     = `{"price":[{"anything-but":[100,500]}]}`
	specBody33      = `{"object":{"key":[{"prefix":"auto-"},"hardcodedvalue"],"nested_key":[{"exists":false}]},"test":[{"exists":false}]}`
	specOr48        = `{"$or":[{"metricName":["CPUUtilization","ReadLatency"]},{"namespace":["AWS/EC2","AWS/ES"]}],"detail":{"scope":["Service"],"$or":[{"source":["aws.cloudwatch"]},{"type":["CloudWatch Alarm State Change"]}]}}`
	specIP52        = `{"detail":{"$or":[{"sourceIPAddress":[{"cidr":"10.0.0.0/24"}]},{"sourceIPAddressV6":[{"cidr":"2001:db8:1234:1a00::/64"}]}]}}`
	specS3          = `{"Records":{"s3":{"object":{"key":[{"prefix":"auto-"}]}},"eventName":[{"prefix":"ObjectCreated:"}]}}`
)

var matchCases = []matchCase{
	// ---- The examples of the spec (filter-policy.md §6), in order. ----
	{"spec01", A, specInterests, "", attrs("customer_interests", str("rugby")), true},
	{"spec02", A, specInterests, "", attrs("customer_interests", str("baseball")), false},
	{"spec03", A, specInterests, "", attrs("customer_interests", arr(`["rugby","tennis"]`)), true},
	{"spec04", A, specInterests, "", attrs("customer_interests", arr(`["baseball"]`)), false},
	{"spec05", B, specInterests, `{"customer_interests":"tennis"}`, nil, true},
	{"spec06", A, `{"customer_interests":[{"prefix":"bas"}]}`, "", attrs("customer_interests", str("basketball")), true},
	{"spec07", A, `{"customer_interests":[{"prefix":"bas"}]}`, "", attrs("customer_interests", str("rugby")), false},
	{"spec08", A, specAnythingBut, "", attrs("customer_interests", str("football")), true},
	{"spec09", A, specAnythingBut, "", attrs("customer_interests", str("rugby")), false},
	{"spec10", B, specAnythingBut, `{"customer_interests":["rugby","baseball"]}`, nil, true},
	{"spec11", B, specAnythingBut, `{"customer_interests":["rugby"]}`, nil, false},
	{"spec12", A, `{"event":[{"anything-but":{"prefix":"order-"}}]}`, "", attrs("event", str("order_number")), true},
	{"spec13", A, `{"event":[{"anything-but":{"prefix":"order-"}}]}`, "", attrs("event", str("order-cancelled")), false},
	{"spec14", A, `{"source_ip":[{"cidr":"10.0.0.0/24"}]}`, "", attrs("source_ip", str("10.0.0.255")), true},
	{"spec15", A, `{"source_ip":[{"cidr":"10.0.0.0/24"}]}`, "", attrs("source_ip", str("10.1.1.0")), false},
	{"spec16", A, `{"price_usd":[{"numeric":["=",301.5]}]}`, "", attrs("price_usd", num("3.015e2")), true},
	{"spec17", A, specPriceAB, "", attrs("price", num("100.1")), true},
	{"spec18", A, specPriceAB, "", attrs("price", num("100")), false},
	{"spec19", B, specPriceAB, `{"price":[100,50]}`, nil, true},
	{"spec20", A, `{"price_usd":[{"numeric":["<",0]}]}`, "", attrs("price_usd", num("-3")), true},
	{"spec21", A, `{"price_usd":[{"numeric":[">",0,"<=",150]}]}`, "", attrs("price_usd", num("150")), true},
	{"spec22", A, `{"price_usd":[{"numeric":[">",0,"<=",150]}]}`, "", attrs("price_usd", num("0")), false},
	{"spec23", A, `{"attr1":[{"numeric":[">",0,"<=",100]}]}`, "", attrs("attr1", num("99")), true},
	{"spec24", A, `{"attr1":[{"numeric":[">",0,"<=",100]}]}`, "", attrs("attr1", num("111")), false},
	{"spec25", A, `{"attr1":[null,{"anything-but":"whatever"}]}`, "", nil, false},
	{"spec26", A, `{"store":[{"exists":true}]}`, "", attrs("store", num("99"), "def", num("99")), true},
	{"spec27", A, `{"store":[{"exists":true}]}`, "", attrs("attr1", num("111")), false},
	{"spec28", A, `{"store":[{"exists":false}]}`, "", attrs("def", num("99")), true},
	{"spec29", A, `{"store":[{"exists":false}]}`, "", attrs("store", num("99"), "def", num("99")), false},
	{"spec30", A, `{"store":["value1"]}`, "", attrs("store", str("value1")), true},
	{"spec31", A, `{"store":["value1"]}`, "", attrs("store", arr(`["value1","value2"]`)), true},
	{"spec32", A, `{"store":["value1"]}`, "", attrs("store", arr(`["value2","value3"]`)), false},
	{"spec33", B, specBody33, `{"object":{"key":"auto-test"}}`, nil, true},
	{"spec34", B, specBody33, `{"object":{"key":"hardcodedvalue"}}`, nil, true},
	{"spec35", B, specBody33, `{"object":{"key":"test-auto"}}`, nil, false},
	{"spec36", B, specBody33, `{"object":{"key":"auto-test"},"test":"just-exists"}`, nil, false},
	{"spec37", B, specBody33, `{"object":{"key":"auto-test","nested_key":"just-exists"}}`, nil, false},
	{"spec38", B, specBody33, `{"test":"auto-test"}`, nil, false},
	{"spec39", B, specBody33, `Regular string message`, nil, false},
	{"spec40", B, specBody33, `"Regular string message"`, nil, false},
	{"spec41", B, `{"object.nested":["string.value"]}`, `{"object":{"nested":"string.value"}}`, nil, true},
	{"spec42", B, `{"object.nested":["string.value"]}`, `{"object.nested":"string.value"}`, nil, true},
	{"spec43", B, `{"object.nested.test":["string.value"]}`, `{"object.nested":{"test":"string.value"}}`, nil, true},
	{"spec44", B, `{"headers":{"route-to":["queue1"]}}`, `{"headers":{"route-to":["queue1","queue2"]}}`, nil, true},
	{"spec45", B, `{"headers":{"route-to":["queue1"]}}`, `{"headers":{"route-to":["queue3"]}}`, nil, false},
	{"spec46", B, specS3, s3Event("ObjectCreated:Put", "auto-insurance-2314.xml"), nil, true},
	{"spec47", B, specS3, s3Event("ObjectRemoved:Delete", "auto-insurance-2314.xml"), nil, false},
	{"spec48", B, specOr48, `{"namespace":"AWS/EC2","detail":{"scope":"Service","source":"aws.cloudwatch"}}`, nil, true},
	{"spec49", B, specOr48, `{"metricName":"CPUUtilization","detail":{"scope":"Service"}}`, nil, false},
	{"spec50", B, specOr48, `{"metricName":"AWS/EC2","detail":{"scope":"Service","type":"CloudWatch Alarm State Change"}}`, nil, false},
	{"spec51", B, `{"detail":{"eventVersion":[""]}}`, `{"resources":[],"detail":{"eventVersion":"","responseElements":null}}`, nil, true},
	{"spec52", B, specIP52, `{"detail":{"sourceIPAddress":"10.0.0.255"}}`, nil, true},
	{"spec53", B, specIP52, `{"detail":{"sourceIPAddress":"10.0.0.256"}}`, nil, false},
	{"spec54", B, specIP52, `{"detail":{"sourceIPAddressV6":"2001:0db8:1234:1a00:0000:0000:0000:0000"}}`, nil, true},
	{"spec55", B, specIP52, `{"detail":{"sourceIPAddressV6":"2001:0db8:123f:1a01:0000:0000:0000:0000"}}`, nil, false},
	{"spec56", B, `{"detail":{"payload.nested.another-level.deep":{"inside-list":[{"prefix":"q-test"}]}}}`,
		`{"source":"app","detail":{"id":42,"payload":{"kind":"x","nested":{"another-level":[{"deep":{"inside-list":["a","b"]}},{"deep":{"inside-list":["c","q-test-1"]}}],"sibling":{"deep":1}}},"tags":["t1","t2"]}}`, nil, true},
	// The rest of the LocalStack-recorded $or body test (all of its messages).
	{"or-body-wrong-scope-value", B, specOr48, `{"metricName":"CPUUtilization","detail":{"scope":"aws.cloudwatch","type":"CloudWatch Alarm State Change"}}`, nil, false},
	{"or-body-wrong-type", B, specOr48, `{"metricName":"CPUUtilization","detail":{"scope":"Service","type":"CPUUtilization"}}`, nil, false},
	{"or-body-missing-scope", B, specOr48, `{"metricName":"CPUUtilization","detail":{"type":"CloudWatch Alarm State Change"}}`, nil, false},
	{"or-body-scope-top-level", B, specOr48, `{"metricName":"CPUUtilization","scope":"Service"}`, nil, false},
	{"or-body-pass-1", B, specOr48, `{"metricName":"CPUUtilization","detail":{"scope":"Service","source":"aws.cloudwatch"}}`, nil, true},
	{"or-body-pass-2", B, specOr48, `{"metricName":"ReadLatency","detail":{"scope":"Service","source":"aws.cloudwatch"}}`, nil, true},
	{"or-body-pass-3", B, specOr48, `{"namespace":"AWS/ES","detail":{"scope":"Service","source":"aws.cloudwatch"}}`, nil, true},
	{"or-body-pass-4", B, specOr48, `{"metricName":"CPUUtilization","detail":{"scope":"Service","type":"CloudWatch Alarm State Change"}}`, nil, true},
	{"or-body-namespace-value-wrong", B, specOr48, `{"namespace":"CPUUtilization","detail":{"scope":"Service","type":"CloudWatch Alarm State Change"}}`, nil, false},

	// ---- Attribute scope: exact strings. ----
	{"str-case-sensitive", A, `{"a":["Rugby"]}`, "", attrs("a", str("rugby")), false},
	{"str-empty-value", A, `{"a":[""]}`, "", attrs("a", str("")), true},
	{"str-unicode", A, `{"a":["café ☕"]}`, "", attrs("a", str("café ☕")), true},
	{"str-escaped-policy", A, `{"a":["caf\u00e9 \"q\""]}`, "", attrs("a", str(`café "q"`)), true},
	{"str-custom-type", A, `{"a":["x"]}`, "", attrs("a", typed("String.custom", "x")), true},
	{"str-unknown-type-as-string", A, `{"a":["x"]}`, "", attrs("a", typed("Weird", "x")), true},
	{"key-case-sensitive", A, `{"A":["x"]}`, "", attrs("a", str("x")), false},
	{"key-with-dot-attr-scope", A, `{"a.b":["x"]}`, "", attrs("a.b", str("x")), true},
	{"and-both", A, `{"a":["x"],"b":["y"]}`, "", attrs("a", str("x"), "b", str("y")), true},
	{"and-one-missing", A, `{"a":["x"],"b":["y"]}`, "", attrs("a", str("x")), false},
	{"and-one-wrong", A, `{"a":["x"],"b":["y"]}`, "", attrs("a", str("x"), "b", str("z")), false},
	{"or-within-key", A, `{"a":["x","y","z"]}`, "", attrs("a", str("z")), true},
	{"extra-attributes-ignored", A, `{"a":["x"]}`, "", attrs("a", str("x"), "b", str("q"), "c", num("1")), true},
	{"no-attributes", A, `{"a":["x"]}`, "", nil, false},
	{"five-keys", A, `{"a":["1"],"b":["2"],"c":["3"],"d":["4"],"e":["5"]}`, "", attrs("a", str("1"), "b", str("2"), "c", str("3"), "d", str("4"), "e", str("5")), true},
	{"mixed-conditions-in-key", A, `{"a":["x",{"prefix":"pre"},{"numeric":[">",5]}]}`, "", attrs("a", str("prefix")), true},
	// Literals only match JSON literals, which attributes are not.
	{"literal-true-vs-string", A, `{"a":[true]}`, "", attrs("a", str("true")), false},
	{"literal-null-vs-string", A, `{"a":[null]}`, "", attrs("a", str("null")), false},
	{"literal-false-vs-string", A, `{"a":[false]}`, "", attrs("a", str("false")), false},

	// ---- Attribute scope: numbers. ----
	{"num-exact", A, `{"p":[100]}`, "", attrs("p", num("100")), true},
	{"num-exact-float-form", A, `{"p":[100]}`, "", attrs("p", num("100.0")), true},
	{"num-exact-exp-form", A, `{"p":[100]}`, "", attrs("p", num("1e2")), true},
	{"num-exact-six-decimals-equal", A, `{"p":[100]}`, "", attrs("p", num("100.000001")), true},
	{"num-exact-five-decimals-differ", A, `{"p":[100]}`, "", attrs("p", num("100.00001")), false},
	{"num-exact-wrong", A, `{"p":[100]}`, "", attrs("p", num("101")), false},
	{"num-exact-vs-string-attr", A, `{"p":[100]}`, "", attrs("p", str("100")), false},
	{"num-string-policy-vs-number-attr", A, `{"p":["100"]}`, "", attrs("p", num("100")), true},
	{"num-string-policy-vs-other-form", A, `{"p":["100"]}`, "", attrs("p", num("100.0")), false},
	{"num-custom-type", A, `{"p":[{"numeric":[">",1]}]}`, "", attrs("p", typed("Number.float", "1.5")), true},
	{"num-negative-exact", A, `{"p":[-5]}`, "", attrs("p", num("-5.0")), true},
	{"num-eq-op", A, `{"p":[{"numeric":["=",0]}]}`, "", attrs("p", num("-0")), true},
	{"num-lt-boundary", A, `{"p":[{"numeric":["<",10]}]}`, "", attrs("p", num("10")), false},
	{"num-le-boundary", A, `{"p":[{"numeric":["<=",10]}]}`, "", attrs("p", num("10")), true},
	{"num-gt-boundary", A, `{"p":[{"numeric":[">",10]}]}`, "", attrs("p", num("10")), false},
	{"num-ge-boundary", A, `{"p":[{"numeric":[">=",10]}]}`, "", attrs("p", num("10")), true},
	{"num-gt", A, `{"p":[{"numeric":[">",10]}]}`, "", attrs("p", num("10.5")), true},
	{"num-range-ge-lt-bottom", A, `{"p":[{"numeric":[">=",0,"<",1]}]}`, "", attrs("p", num("0")), true},
	{"num-range-ge-lt-top", A, `{"p":[{"numeric":[">=",0,"<",1]}]}`, "", attrs("p", num("1")), false},
	{"num-range-inside", A, `{"p":[{"numeric":[">",-1e3,"<",1e3]}]}`, "", attrs("p", num("999.99999")), true},
	{"num-big-values", A, `{"p":[{"numeric":[">",999999999]}]}`, "", attrs("p", num("1000000000")), true},
	{"num-out-of-documented-range", A, `{"p":[{"numeric":[">",5e9]}]}`, "", attrs("p", num("6e9")), true},
	{"num-numeric-vs-string-attr", A, `{"p":[{"numeric":[">",1]}]}`, "", attrs("p", str("5")), false},
	{"num-unparseable-number-attr", A, `{"p":[{"numeric":[">",1]}]}`, "", attrs("p", num("abc")), false},
	{"num-hex-not-a-number", A, `{"p":[{"numeric":[">",1]}]}`, "", attrs("p", num("0x10")), false},
	{"num-plus-sign", A, `{"p":[{"numeric":["=",5]}]}`, "", attrs("p", num("+5")), true},
	{"num-leading-dot", A, `{"p":[{"numeric":["=",0.5]}]}`, "", attrs("p", num(".5")), true},
	{"num-precision-rounding", A, `{"p":[{"numeric":[">",0]}]}`, "", attrs("p", num("0.000001")), false},
	{"num-prefix-on-number-attr", A, `{"p":[{"prefix":"1"}]}`, "", attrs("p", num("100")), false},

	// ---- Attribute scope: prefix, suffix, equals-ignore-case. ----
	{"prefix-exact-length", A, `{"a":[{"prefix":"abc"}]}`, "", attrs("a", str("abc")), true},
	{"prefix-empty", A, `{"a":[{"prefix":""}]}`, "", attrs("a", str("anything")), true},
	{"prefix-case", A, `{"a":[{"prefix":"ABC"}]}`, "", attrs("a", str("abcdef")), false},
	{"suffix-match", A, `{"a":[{"suffix":"ball"}]}`, "", attrs("a", str("baseball")), true},
	{"suffix-no", A, `{"a":[{"suffix":"ball"}]}`, "", attrs("a", str("balls")), false},
	{"eic-match", A, `{"a":[{"equals-ignore-case":"RuGbY"}]}`, "", attrs("a", str("rugby")), true},
	{"eic-no-partial", A, `{"a":[{"equals-ignore-case":"RuGbY"}]}`, "", attrs("a", str("rugby7")), false},
	{"eic-unicode", A, `{"a":[{"equals-ignore-case":"ÉTÉ"}]}`, "", attrs("a", str("été")), true},
	{"eic-on-number-attr", A, `{"a":[{"equals-ignore-case":"1"}]}`, "", attrs("a", num("1")), false},

	// ---- Attribute scope: anything-but. ----
	{"ab-single-string", A, `{"a":[{"anything-but":"x"}]}`, "", attrs("a", str("y")), true},
	{"ab-single-string-equal", A, `{"a":[{"anything-but":"x"}]}`, "", attrs("a", str("x")), false},
	{"ab-single-number", A, `{"a":[{"anything-but":100}]}`, "", attrs("a", num("100.0")), false},
	{"ab-single-number-other", A, `{"a":[{"anything-but":100}]}`, "", attrs("a", num("99")), true},
	{"ab-numbers-vs-string-attr", A, `{"a":[{"anything-but":[100,500]}]}`, "", attrs("a", str("100")), true},
	{"ab-strings-vs-number-attr-text", A, `{"a":[{"anything-but":["100"]}]}`, "", attrs("a", num("100")), false},
	{"ab-absent", A, `{"a":[{"anything-but":"x"}]}`, "", attrs("b", str("y")), false},
	{"ab-absent-with-exists-false", A, `{"a":[{"anything-but":"x"},{"exists":false}]}`, "", attrs("b", str("y")), true},
	// exists:false needs at least one attribute on the message (AWS key
	// matching page); with none, no attribute policy matches.
	{"ab-absent-with-exists-false-no-attributes", A, `{"a":[{"anything-but":"x"},{"exists":false}]}`, "", nil, false},
	{"exists-false-no-attributes", A, `{"store":[{"exists":false}]}`, "", nil, false},
	{"exists-false-empty-attribute-map", A, `{"store":[{"exists":false}]}`, "", map[string]Attribute{}, false},
	{"exists-false-or-branch-no-attributes", A, `{"$or":[{"a":[{"exists":false}]},{"b":["x"]}]}`, "", nil, false},
	{"ab-binary", A, `{"a":[{"anything-but":"x"}]}`, "", attrs("a", bin([]byte{1})), false},
	{"ab-prefix-empty-value", A, `{"a":[{"anything-but":{"prefix":"x"}}]}`, "", attrs("a", str("")), true},
	{"ab-prefix-number-attr", A, `{"a":[{"anything-but":{"prefix":"1"}}]}`, "", attrs("a", num("100")), true},
	// String.Array: anything-but passes only when no element is excluded
	// (the current AWS documentation).
	{"ab-array-one-excluded", A, specAnythingBut, "", attrs("customer_interests", arr(`["rugby","baseball"]`)), false},
	{"ab-array-none-excluded", A, specAnythingBut, "", attrs("customer_interests", arr(`["football","baseball"]`)), true},
	{"ab-array-empty", A, specAnythingBut, "", attrs("customer_interests", arr(`[]`)), false},
	{"ab-prefix-array-none", A, `{"a":[{"anything-but":{"prefix":"order-"}}]}`, "", attrs("a", arr(`["x","y"]`)), true},
	{"ab-prefix-array-one", A, `{"a":[{"anything-but":{"prefix":"order-"}}]}`, "", attrs("a", arr(`["x","order-1"]`)), false},

	// ---- Attribute scope: String.Array. ----
	{"array-numbers-exact", A, `{"a":[2]}`, "", attrs("a", arr(`[1,2,3]`)), true},
	{"array-numbers-numeric", A, `{"a":[{"numeric":[">",2]}]}`, "", attrs("a", arr(`[1,2,3]`)), true},
	{"array-numbers-numeric-none", A, `{"a":[{"numeric":[">",3]}]}`, "", attrs("a", arr(`[1,2,3]`)), false},
	{"array-number-vs-string-policy", A, `{"a":["2"]}`, "", attrs("a", arr(`[1,2,3]`)), false},
	{"array-true-literal", A, `{"a":[true]}`, "", attrs("a", arr(`["x",true]`)), true},
	{"array-null-literal", A, `{"a":[null]}`, "", attrs("a", arr(`[null]`)), true},
	{"array-prefix", A, `{"a":[{"prefix":"ba"}]}`, "", attrs("a", arr(`["rugby","baseball"]`)), true},
	{"array-escaped-element", A, `{"a":["say \"hi\""]}`, "", attrs("a", arr(`["say \"hi\""]`)), true},
	{"array-invalid-json", A, `{"a":["x"]}`, "", attrs("a", arr(`["x"`)), false},
	{"array-invalid-json-exists", A, `{"a":[{"exists":true}]}`, "", attrs("a", arr(`not json`)), true},
	{"array-not-an-array", A, `{"a":["x"]}`, "", attrs("a", arr(`"x"`)), false},
	{"array-empty-exists", A, `{"a":[{"exists":true}]}`, "", attrs("a", arr(`[]`)), true},
	{"array-nested-element-ignored", A, `{"a":["x"]}`, "", attrs("a", arr(`[["x"]]`)), false},
	{"array-whitespace", A, `{"a":["x"]}`, "", attrs("a", arr(" [ \"y\" , \"x\" ] ")), true},

	// ---- Attribute scope: exists, Binary. ----
	{"exists-true-binary", A, `{"a":[{"exists":true}]}`, "", attrs("a", bin([]byte("x"))), true},
	{"exists-false-binary", A, `{"a":[{"exists":false}]}`, "", attrs("a", bin([]byte("x"))), false},
	{"binary-never-matches-value", A, `{"a":["x"]}`, "", attrs("a", Attribute{DataType: "Binary", StringValue: "x"}), false},
	{"exists-true-empty-string", A, `{"a":[{"exists":true}]}`, "", attrs("a", str("")), true},
	{"exists-false-and-other-key", A, `{"a":[{"exists":false}],"b":["y"]}`, "", attrs("b", str("y")), true},

	// ---- Attribute scope: cidr. ----
	{"cidr-v4-network", A, `{"ip":[{"cidr":"10.0.0.0/24"}]}`, "", attrs("ip", str("10.0.0.0")), true},
	{"cidr-v4-outside", A, `{"ip":[{"cidr":"10.0.0.0/24"}]}`, "", attrs("ip", str("10.0.1.0")), false},
	{"cidr-v4-not-ip", A, `{"ip":[{"cidr":"10.0.0.0/24"}]}`, "", attrs("ip", str("hello")), false},
	{"cidr-v4-leading-zero", A, `{"ip":[{"cidr":"10.0.0.0/24"}]}`, "", attrs("ip", str("10.0.0.01")), false},
	{"cidr-v4-range-starts-at-address", A, `{"ip":[{"cidr":"10.0.0.128/24"}]}`, "", attrs("ip", str("10.0.0.5")), false},
	{"cidr-v4-range-from-address", A, `{"ip":[{"cidr":"10.0.0.128/24"}]}`, "", attrs("ip", str("10.0.0.200")), true},
	{"cidr-v4-zero-mask", A, `{"ip":[{"cidr":"0.0.0.0/0"}]}`, "", attrs("ip", str("203.0.113.9")), true},
	{"cidr-v4-vs-v6-value", A, `{"ip":[{"cidr":"0.0.0.0/0"}]}`, "", attrs("ip", str("::1")), false},
	{"cidr-v4-mapped-value", A, `{"ip":[{"cidr":"10.0.0.0/8"}]}`, "", attrs("ip", str("::ffff:10.1.2.3")), true},
	{"cidr-v6-compressed", A, `{"ip":[{"cidr":"2001:db8::/32"}]}`, "", attrs("ip", str("2001:db8:ffff::1")), true},
	{"cidr-v6-outside", A, `{"ip":[{"cidr":"2001:db8::/32"}]}`, "", attrs("ip", str("2001:db9::1")), false},
	{"cidr-number-attr", A, `{"ip":[{"cidr":"10.0.0.0/8"}]}`, "", attrs("ip", num("10")), false},
	{"cidr-array-element", A, `{"ip":[{"cidr":"10.0.0.0/8"}]}`, "", attrs("ip", arr(`["1.2.3.4","10.9.9.9"]`)), true},

	// ---- Attribute scope: $or. ----
	{"or-attr-first", A, `{"$or":[{"a":["x"]},{"b":["y"]}]}`, "", attrs("a", str("x")), true},
	{"or-attr-second", A, `{"$or":[{"a":["x"]},{"b":["y"]}]}`, "", attrs("b", str("y")), true},
	{"or-attr-none", A, `{"$or":[{"a":["x"]},{"b":["y"]}]}`, "", attrs("a", str("y"), "b", str("x")), false},
	{"or-attr-with-and", A, `{"c":["z"],"$or":[{"a":["x"]},{"b":["y"]}]}`, "", attrs("b", str("y")), false},
	{"or-attr-with-and-ok", A, `{"c":["z"],"$or":[{"a":["x"]},{"b":["y"]}]}`, "", attrs("b", str("y"), "c", str("z")), true},
	{"or-attr-nested-or", A, `{"$or":[{"a":["x"]},{"$or":[{"b":["y"]},{"c":["z"]}]}]}`, "", attrs("c", str("z")), true},
	{"or-attr-branch-overrides-key", A, `{"a":["x"],"$or":[{"a":["y"]},{"b":["z"]}]}`, "", attrs("a", str("y")), true},
	{"or-attr-later-key-overrides-branch", A, `{"$or":[{"a":["y"]},{"b":["z"]}],"a":["x"]}`, "", attrs("a", str("y")), false},
	{"dup-key-last-wins", A, `{"a":["x"],"a":["y"]}`, "", attrs("a", str("y")), true},
	{"dup-key-first-dropped", A, `{"a":["x"],"a":["y"]}`, "", attrs("a", str("x")), false},

	// ---- Empty policies. ----
	{"empty-string-policy", A, ``, "", nil, true},
	{"empty-object-policy", A, `{}`, "", nil, true},
	{"empty-object-policy-body", B, `{ }`, "not json", nil, true},

	// ---- Body scope. ----
	{"body-flat", B, `{"a":["x"]}`, `{"a":"x"}`, nil, true},
	{"body-ignores-attributes", B, `{"a":["x"]}`, `{"b":"x"}`, attrs("a", str("x")), false},
	{"body-nested-3", B, `{"a":{"b":{"c":["x"]}}}`, `{"a":{"b":{"c":"x"}}}`, nil, true},
	{"body-nested-wrong-level", B, `{"a":{"b":{"c":["x"]}}}`, `{"a":{"c":"x"}}`, nil, false},
	{"body-number-exact", B, `{"n":[5]}`, `{"n":5.0}`, nil, true},
	{"body-number-vs-string", B, `{"n":[5]}`, `{"n":"5"}`, nil, false},
	{"body-string-vs-number", B, `{"n":["5"]}`, `{"n":5}`, nil, false},
	{"body-numeric-range", B, `{"n":[{"numeric":[">=",1,"<",2]}]}`, `{"n":1.99999}`, nil, true},
	{"body-numeric-exp", B, `{"n":[{"numeric":["=",1000]}]}`, `{"n":1E3}`, nil, true},
	{"body-true", B, `{"b":[true]}`, `{"b":true}`, nil, true},
	{"body-true-vs-string", B, `{"b":[true]}`, `{"b":"true"}`, nil, false},
	{"body-false", B, `{"b":[false]}`, `{"b":false}`, nil, true},
	{"body-null", B, `{"b":[null]}`, `{"b":null}`, nil, true},
	{"body-null-absent", B, `{"b":[null]}`, `{"c":1}`, nil, false},
	{"body-null-exists", B, `{"b":[{"exists":true}]}`, `{"b":null}`, nil, true},
	{"body-null-anything-but", B, `{"b":[{"anything-but":"x"}]}`, `{"b":null}`, nil, true},
	{"body-exists-false-absent", B, `{"b":[{"exists":false}]}`, `{"c":1}`, nil, true},
	{"body-exists-empty-array", B, `{"b":[{"exists":true}]}`, `{"b":[]}`, nil, false},
	{"body-exists-false-empty-array", B, `{"b":[{"exists":false}]}`, `{"b":[]}`, nil, true},
	{"body-exists-on-object", B, `{"b":[{"exists":true}]}`, `{"b":{"c":1}}`, nil, false},
	{"body-exists-false-on-object", B, `{"b":[{"exists":false}]}`, `{"b":{"c":1}}`, nil, true},
	{"body-path-through-scalar", B, `{"a":{"b":[{"exists":false}]}}`, `{"a":"x"}`, nil, true},
	{"body-array-of-scalars", B, `{"a":["x"]}`, `{"a":["w","x"]}`, nil, true},
	{"body-nested-arrays", B, `{"a":["x"]}`, `{"a":[["w"],["v",["x"]]]}`, nil, true},
	{"body-array-of-objects-same-element", B, `{"r":{"a":["1"],"b":["2"]}}`, `{"r":[{"a":"1","b":"2"},{"a":"3","b":"4"}]}`, nil, true},
	{"body-array-of-objects-split", B, `{"r":{"a":["1"],"b":["4"]}}`, `{"r":[{"a":"1","b":"2"},{"a":"3","b":"4"}]}`, nil, false},
	{"body-array-exists-false-in-element", B, `{"r":{"a":["1"],"b":[{"exists":false}]}}`, `{"r":[{"a":"1","b":"2"},{"a":"1"}]}`, nil, true},
	{"body-array-exists-false-all-have", B, `{"r":{"a":["1"],"b":[{"exists":false}]}}`, `{"r":[{"a":"1","b":"2"},{"a":"3"}]}`, nil, false},
	{"body-independent-arrays", B, `{"x":{"a":["1"]},"y":{"b":["2"]}}`, `{"x":[{"a":"0"},{"a":"1"}],"y":[{"b":"2"}]}`, nil, true},
	{"body-anything-but-array-any", B, `{"a":[{"anything-but":"x"}]}`, `{"a":["x","y"]}`, nil, true},
	{"body-anything-but-array-all-excluded", B, `{"a":[{"anything-but":"x"}]}`, `{"a":["x","x"]}`, nil, false},
	{"body-anything-but-absent", B, `{"a":[{"anything-but":"x"}]}`, `{}`, nil, false},
	{"body-prefix-in-array", B, `{"a":[{"prefix":"q-"}]}`, `{"a":["x","q-1"]}`, nil, true},
	{"body-suffix", B, `{"a":[{"suffix":".png"}]}`, `{"a":"cat.png"}`, nil, true},
	{"body-equals-ignore-case", B, `{"a":[{"equals-ignore-case":"X"}]}`, `{"a":"x"}`, nil, true},
	{"body-cidr-v6", B, `{"ip":[{"cidr":"fe80::/10"}]}`, `{"ip":"fe80::1"}`, nil, true},
	{"body-escaped-value", B, `{"a":["café"]}`, `{"a":"caf\u00e9"}`, nil, true},
	{"body-escaped-key", B, `{"a\"b":["x"]}`, `{"a\"b":"x"}`, nil, true},
	{"body-unicode-key", B, `{"clé":{"sous":["v"]}}`, `{"clé":{"sous":"v"}}`, nil, true},
	{"body-json-array", B, `{"a":["x"]}`, `[{"a":"x"}]`, nil, false},
	{"body-json-number", B, `{"a":[{"exists":false}]}`, `42`, nil, false},
	{"body-invalid-json", B, `{"a":["x"]}`, `{"a":"x"`, nil, false},
	{"body-empty", B, `{"a":[{"exists":false}]}`, ``, nil, false},
	{"body-trailing-garbage", B, `{"a":["x"]}`, `{"a":"x"} junk`, nil, false},
	{"body-whitespace", B, `{"a":["x"]}`, " \n {\"a\" : \"x\"} \n", nil, true},
	{"body-dotted-both-routes-nested", B, `{"a.b":[1]}`, `{"a":{"b":1},"a.b":2}`, nil, true},
	{"body-dotted-both-routes-literal", B, `{"a.b":[2]}`, `{"a":{"b":1},"a.b":2}`, nil, true},
	{"body-dotted-both-routes-absent", B, `{"a.b":[{"exists":false}]}`, `{"a":{"c":1},"a.b":2}`, nil, false},
	{"body-dotted-both-routes-none", B, `{"a.b":[3]}`, `{"a":{"b":1},"a.b":2}`, nil, false},
	{"body-dotted-policy-nested", B, `{"a":{"b.c":["v"]}}`, `{"a.b":{"c":"v"}}`, nil, true},
	{"body-repeated-key", B, `{"a":[2]}`, `{"a":1,"a":2}`, nil, true},
	{"body-repeated-key-and-sibling", B, `{"r":{"a":[1],"b":[2]}}`, `{"r":{"a":1,"a":3,"b":2}}`, nil, true},
	{"body-empty-key", B, `{"":{"":["x"]}}`, `{"":{"":"x"}}`, nil, true},
	{"body-or-nested-two-levels", B, `{"a":{"$or":[{"b":["1"]},{"c":{"$or":[{"d":["2"]},{"e":["3"]}]}}]}}`, `{"a":{"c":{"e":"3"}}}`, nil, true},
	{"body-or-nested-two-levels-no", B, `{"a":{"$or":[{"b":["1"]},{"c":{"$or":[{"d":["2"]},{"e":["3"]}]}}]}}`, `{"a":{"c":{"e":"2"}}}`, nil, false},
	{"body-or-in-array-of-objects", B, `{"r":{"a":["1"],"$or":[{"b":["2"]},{"c":["3"]}]}}`, `{"r":[{"a":"1","b":"9"},{"a":"1","c":"3"}]}`, nil, true},
	{"body-deep", B, `{"a":{"b":{"c":{"d":{"e":{"f":{"g":["deep"]}}}}}}}`, `{"a":{"b":{"c":{"d":{"e":{"f":{"g":"deep"}}}}}}}`, nil, true},
}

func (tc *matchCase) message() Message {
	return Message{Body: tc.body, Attributes: tc.attrs}
}

func TestMatchTable(t *testing.T) {
	t.Parallel()
	if len(matchCases) < 150 {
		t.Fatalf("table has %d cases, want at least 150", len(matchCases))
	}
	seen := map[string]bool{}
	for _, tc := range matchCases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
	}
	for _, tc := range matchCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Compile(tc.policy, tc.scope)
			if err != nil {
				t.Fatalf("Compile(%s, %s): %v", tc.policy, tc.scope, err)
			}
			m := tc.message()
			if got := p.Match(m); got != tc.want {
				ex, _ := json.MarshalIndent(p.Explain(m), "", "  ")
				t.Fatalf("Match = %v, want %v\npolicy: %s\nbody: %s\nattrs: %v\nexplain: %s", got, tc.want, tc.policy, tc.body, tc.attrs, ex)
			}
			ex := p.Explain(m)
			if ex.Matched != tc.want {
				t.Fatalf("Explain.Matched = %v, want %v", ex.Matched, tc.want)
			}
			if _, err := json.Marshal(ex); err != nil {
				t.Fatalf("Explanation does not serialise: %v", err)
			}
		})
	}
}

// TestSameAnswerInBothScopesForFlatPolicies checks that a flat policy
// means the same on attributes and on an equivalent JSON body, for the
// string and number cases where the two representations agree.
func TestSameAnswerInBothScopesForFlatPolicies(t *testing.T) {
	t.Parallel()
	policies := []string{
		`{"a":["x","y"]}`,
		`{"a":[{"prefix":"x"}],"b":[{"numeric":[">",3]}]}`,
		`{"a":[{"anything-but":["x"]}]}`,
		`{"a":[{"exists":false}],"b":[5]}`,
		`{"$or":[{"a":["x"]},{"b":[{"numeric":["<",0]}]}]}`,
	}
	type msg struct {
		a, b string // "" means absent; b is a number
	}
	msgs := []msg{{"x", "5"}, {"y", "1"}, {"xx", "-1"}, {"", "5"}, {"z", ""}, {"", ""}}
	for _, pol := range policies {
		pa := MustCompile(pol, ScopeAttributes)
		pb := MustCompile(pol, ScopeBody)
		for _, m := range msgs {
			at := map[string]Attribute{}
			var parts []string
			if m.a != "" {
				at["a"] = str(m.a)
				parts = append(parts, fmt.Sprintf("%q:%q", "a", m.a))
			}
			if m.b != "" {
				at["b"] = num(m.b)
				parts = append(parts, fmt.Sprintf("%q:%s", "b", m.b))
			}
			body := "{" + strings.Join(parts, ",") + "}"
			ga := pa.Match(Message{Attributes: at})
			gb := pb.Match(Message{Body: body})
			if ga != gb {
				t.Errorf("policy %s, message %+v: attributes %v, body %v", pol, m, ga, gb)
			}
		}
	}
}

func TestNilPolicyMatchesEverything(t *testing.T) {
	t.Parallel()
	var p *Policy
	if !p.Match(Message{}) {
		t.Fatal("nil policy should match")
	}
	if ex := p.Explain(Message{}); !ex.Matched {
		t.Fatal("nil policy Explain should match")
	}
	if !p.IsEmpty() {
		t.Fatal("nil policy should be empty")
	}
}

func TestPolicyAccessors(t *testing.T) {
	t.Parallel()
	src := `{"a":["x","y"],"b":{"c":[1,2,3]}}`
	p := MustCompile(src, ScopeBody)
	if p.String() != src || p.Scope() != ScopeBody || p.IsEmpty() {
		t.Fatalf("accessors: %q %q %v", p.String(), p.Scope(), p.IsEmpty())
	}
	// a: 2 values at depth 1; c: 3 values at depth 2.
	if got := p.Combinations(); got != 2*1*3*2 {
		t.Fatalf("Combinations = %d, want 12", got)
	}
	e := MustCompile(`{}`, "")
	if !e.IsEmpty() || e.Scope() != ScopeAttributes {
		t.Fatalf("empty policy: %v %q", e.IsEmpty(), e.Scope())
	}
}

func TestExplainDetails(t *testing.T) {
	t.Parallel()
	p := MustCompile(`{"a":["x",{"prefix":"y"}],"b":[{"exists":false}]}`, ScopeAttributes)
	ex := p.Explain(Message{Attributes: attrs("a", str("yes"))})
	if !ex.Matched || len(ex.Branches) != 1 {
		t.Fatalf("explanation: %+v", ex)
	}
	ka, kb := ex.Branches[0].Keys[0], ex.Branches[0].Keys[1]
	if ka.Key != "a" || !ka.Matched || ka.Condition != `{"prefix":"y"}` || ka.MatchedValue != `"yes"` {
		t.Fatalf("key a: %+v", ka)
	}
	if kb.Key != "b" || !kb.Matched || kb.Present || kb.Condition != `{"exists":false}` {
		t.Fatalf("key b: %+v", kb)
	}
	ex = p.Explain(Message{Attributes: attrs("a", str("no"), "b", str("1"))})
	if ex.Matched || ex.Branches[0].Keys[0].Reason == "" || ex.Branches[0].Keys[1].Reason == "" {
		t.Fatalf("explanation: %+v", ex)
	}

	pb := MustCompile(`{"r":{"a":["1"],"b":["4"]}}`, ScopeBody)
	ex = pb.Explain(Message{Body: `{"r":[{"a":"1","b":"2"},{"a":"3","b":"4"}]}`})
	if ex.Matched || !ex.Branches[0].Keys[0].Matched || !ex.Branches[0].Keys[1].Matched || ex.Branches[0].Reason == "" {
		t.Fatalf("split array explanation: %+v", ex)
	}
	if got := ex.Branches[0].Keys[1].Values; len(got) != 2 || got[0] != `"2"` || got[1] != `"4"` {
		t.Fatalf("values: %v", got)
	}
	ex = pb.Explain(Message{Body: `not json`})
	if ex.Matched || ex.Reason == "" {
		t.Fatalf("non-JSON explanation: %+v", ex)
	}
	po := MustCompile(specOr48, ScopeBody)
	ex = po.Explain(Message{Body: `{"namespace":"AWS/EC2","detail":{"scope":"Service","source":"aws.cloudwatch"}}`})
	if !ex.Matched || len(ex.Branches) != 4 {
		t.Fatalf("$or explanation has %d branches: %+v", len(ex.Branches), ex)
	}
}
