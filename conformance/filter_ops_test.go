package conformance

import (
	"context"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// One spec per filter-policy operator and worked example, in both scopes:
// a topic with an unfiltered control subscription and one filtered by the
// policy (set at Subscribe, so it is in force from the first delivery, also
// on AWS). The message is published once; once the control queue has it,
// the filtered queue must have it too, or stay empty.
//
// Evidence, per entry: "DOC <page>" is a page of the SNS developer guide
// (https://docs.aws.amazon.com/sns/latest/dg/<page>.html); "LS-AWS <test>"
// is a localstack test whose snapshot was recorded against AWS
// (tests/aws/services/sns/test_sns_filter_policy.py). The spec's numbers
// (#n) are those of the project's filter-policy reference, §6.

// filterCase publishes body with attrs and checks whether a subscription
// with policy in scope ("" for MessageAttributes) receives it.
func filterCase(ctx context.Context, scope, policy, body string, attrs fpAttrs, match bool) {
	GinkgoHelper()
	topic := createTopic(ctx, "op", nil)
	control, _ := subscribedQueue(ctx, topic, "op-all", nil, map[string]string{"RawMessageDelivery": "true"})
	subAttrs := map[string]string{"RawMessageDelivery": "true", "FilterPolicy": policy}
	if scope != "" {
		subAttrs["FilterPolicyScope"] = scope
	}
	filtered, _ := subscribedQueue(ctx, topic, "op-filtered", nil, subAttrs)
	// Probes (no attributes, not JSON) pass no policy.
	deliverable(ctx, topic, control, false, nil)
	if match {
		// On AWS a fresh subscription may miss a first publish: publish
		// until the filtered queue has the message.
		Eventually(func(g Gomega) {
			_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(body), MessageAttributes: attrs})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(texts(receiveSome(ctx, filtered, 1), false)).To(ContainElement(body))
		}).WithContext(ctx).Should(Succeed())
		return
	}
	_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(body), MessageAttributes: attrs})
	Expect(err).NotTo(HaveOccurred())
	receiveUntil(ctx, control, false, body)
	Expect(without(texts(receiveSome(ctx, filtered, emptyWait), false), "probe")).To(BeEmpty())
}

const bodyScope = "MessageBody"

// receiveSome is one receive of up to 10 messages from q, waiting up to
// wait seconds.
func receiveSome(ctx context.Context, q queue, wait int32) []sqstypes.Message {
	GinkgoHelper()
	out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: wait})
	Expect(err).NotTo(HaveOccurred())
	return out.Messages
}

var _ = Describe("SNS filter policy operators", Label("sns-filter"), func() {
	DescribeTable("in MessageAttributes scope",
		func(ctx SpecContext, policy string, attrs fpAttrs, match bool) {
			filterCase(ctx, "", policy, "attribute case", attrs, match)
		},
		// Exact strings. DOC string-value-matching.
		Entry("#1 exact string: one of the listed values matches", `{"customer_interests":["rugby","tennis"]}`, fpAttrs{"customer_interests": fpStr("rugby")}, true),
		Entry("#2 exact string: another value does not", `{"customer_interests":["rugby","tennis"]}`, fpAttrs{"customer_interests": fpStr("baseball")}, false),
		Entry("exact string: comparison is case-sensitive (DOC string-value-matching)", `{"customer_interests":["rugby"]}`, fpAttrs{"customer_interests": fpStr("Rugby")}, false),
		Entry("#3 String.Array: any element may match", `{"customer_interests":["rugby","tennis"]}`, fpAttrs{"customer_interests": fpArr(`["rugby","tennis"]`)}, true),
		Entry("#4 String.Array: no element matches", `{"customer_interests":["rugby","tennis"]}`, fpAttrs{"customer_interests": fpArr(`["baseball"]`)}, false),
		Entry("#31 String.Array with one listed element (LS-AWS test_exists_filter_policy_attributes_array)", `{"store":["value1"]}`, fpAttrs{"store": fpArr(`["value1","value2"]`)}, true),
		Entry("#32 String.Array without the listed element (LS-AWS same)", `{"store":["value1"]}`, fpAttrs{"store": fpArr(`["value2","value3"]`)}, false),
		Entry("absent key: the message lacks the attribute (DOC sns-subscription-filter-policies)", `{"store":["example_corp"]}`, fpAttrs{"other": fpStr("example_corp")}, false),
		Entry("AND of keys: every key must match (DOC and-or-logic)", `{"store":["example_corp"],"event":["order_placed"]}`, fpAttrs{"store": fpStr("example_corp"), "event": fpStr("order_cancelled")}, false),
		Entry("AND of keys: all keys match (DOC and-or-logic)", `{"store":["example_corp"],"event":["order_placed"]}`, fpAttrs{"store": fpStr("example_corp"), "event": fpStr("order_placed")}, true),
		Entry("extra attributes are ignored (DOC sns-subscription-filter-policies)", `{"store":["example_corp"]}`, fpAttrs{"store": fpStr("example_corp"), "x": fpStr("y")}, true),

		// prefix, suffix, equals-ignore-case. DOC string-value-matching.
		Entry("#6 prefix matches", `{"customer_interests":[{"prefix":"bas"}]}`, fpAttrs{"customer_interests": fpStr("basketball")}, true),
		Entry("#7 prefix does not match", `{"customer_interests":[{"prefix":"bas"}]}`, fpAttrs{"customer_interests": fpStr("rugby")}, false),
		Entry("suffix matches", `{"customer_interests":[{"suffix":"ball"}]}`, fpAttrs{"customer_interests": fpStr("baseball")}, true),
		Entry("suffix does not match", `{"customer_interests":[{"suffix":"ball"}]}`, fpAttrs{"customer_interests": fpStr("rugby")}, false),
		Entry("equals-ignore-case matches another case", `{"customer_interests":[{"equals-ignore-case":"RuGbY"}]}`, fpAttrs{"customer_interests": fpStr("rugby")}, true),
		Entry("equals-ignore-case does not match another word", `{"customer_interests":[{"equals-ignore-case":"RuGbY"}]}`, fpAttrs{"customer_interests": fpStr("rugbies")}, false),

		// anything-but. DOC string-value-matching, numeric-value-matching.
		Entry("#8 anything-but list: a value not listed matches", `{"customer_interests":[{"anything-but":["rugby","tennis"]}]}`, fpAttrs{"customer_interests": fpStr("football")}, true),
		Entry("#9 anything-but list: a listed value does not", `{"customer_interests":[{"anything-but":["rugby","tennis"]}]}`, fpAttrs{"customer_interests": fpStr("rugby")}, false),
		Entry("anything-but single string", `{"event":[{"anything-but":"order_cancelled"}]}`, fpAttrs{"event": fpStr("order_placed")}, true),
		Entry("anything-but never matches an absent key (DOC string-value-matching)", `{"event":[{"anything-but":"order_cancelled"}]}`, fpAttrs{"other": fpStr("x")}, false),
		Entry("#12 anything-but prefix: another prefix matches", `{"event":[{"anything-but":{"prefix":"order-"}}]}`, fpAttrs{"event": fpStr("order_number")}, true),
		Entry("#13 anything-but prefix: the prefix does not", `{"event":[{"anything-but":{"prefix":"order-"}}]}`, fpAttrs{"event": fpStr("order-cancelled")}, false),
		Entry("#17 anything-but numbers: another number matches", `{"price":[{"anything-but":[100,500]}]}`, fpAttrs{"price": fpNum("100.1")}, true),
		Entry("#18 anything-but numbers: a listed number does not", `{"price":[{"anything-but":[100,500]}]}`, fpAttrs{"price": fpNum("100")}, false),
		Entry("#25 null and anything-but do not match a message without attributes (LS-AWS test_filter_policy)", `{"attr1":[null,{"anything-but":"whatever"}]}`, nil, false),

		// numeric. DOC numeric-value-matching.
		Entry("#16 numeric equality across notations", `{"price_usd":[{"numeric":["=",301.5]}]}`, fpAttrs{"price_usd": fpNum("3.015e2")}, true),
		Entry("exact number literal", `{"price_usd":[301.5]}`, fpAttrs{"price_usd": fpNum("301.5")}, true),
		Entry("#20 numeric less than zero", `{"price_usd":[{"numeric":["<",0]}]}`, fpAttrs{"price_usd": fpNum("-3")}, true),
		Entry("#21 numeric range includes its closed top", `{"price_usd":[{"numeric":[">",0,"<=",150]}]}`, fpAttrs{"price_usd": fpNum("150")}, true),
		Entry("#22 numeric range excludes its open bottom", `{"price_usd":[{"numeric":[">",0,"<=",150]}]}`, fpAttrs{"price_usd": fpNum("0")}, false),
		Entry("#23 numeric range inside (LS-AWS test_filter_policy)", `{"attr1":[{"numeric":[">",0,"<=",100]}]}`, fpAttrs{"attr1": fpNum("99")}, true),
		Entry("#24 numeric range above (LS-AWS test_filter_policy)", `{"attr1":[{"numeric":[">",0,"<=",100]}]}`, fpAttrs{"attr1": fpNum("111")}, false),
		Entry("numeric >= includes the bound", `{"n":[{"numeric":[">=",10]}]}`, fpAttrs{"n": fpNum("10")}, true),
		Entry("numeric does not match a String attribute that is not a number", `{"n":[{"numeric":[">",0]}]}`, fpAttrs{"n": fpStr("ten")}, false),

		// exists. DOC attribute-key-matching; LS-AWS test_exists_filter_policy.
		Entry("#26 exists true: the key is there", `{"store":[{"exists":true}]}`, fpAttrs{"store": fpNum("99"), "def": fpNum("99")}, true),
		Entry("#27 exists true: the key is not there", `{"store":[{"exists":true}]}`, fpAttrs{"attr1": fpNum("99")}, false),
		Entry("#28 exists false: the key is not there", `{"store":[{"exists":false}]}`, fpAttrs{"def": fpNum("99")}, true),
		Entry("#29 exists false: the key is there", `{"store":[{"exists":false}]}`, fpAttrs{"store": fpNum("99"), "def": fpNum("99")}, false),
		Entry("exists false does not match a message without attributes (DOC attribute-key-matching note)", `{"store":[{"exists":false}]}`, nil, false),

		// cidr. DOC string-value-matching (IP address matching).
		Entry("#14 cidr: an address inside the network", `{"source_ip":[{"cidr":"10.0.0.0/24"}]}`, fpAttrs{"source_ip": fpStr("10.0.0.255")}, true),
		Entry("#15 cidr: an address outside", `{"source_ip":[{"cidr":"10.0.0.0/24"}]}`, fpAttrs{"source_ip": fpStr("10.1.1.0")}, false),
		Entry("cidr IPv6: an address inside", `{"source_ip":[{"cidr":"2001:db8:1234:1a00::/64"}]}`, fpAttrs{"source_ip": fpStr("2001:db8:1234:1a00::1")}, true),

		// $or. DOC and-or-logic.
		Entry("$or: the second branch matches", `{"$or":[{"store":["a"]},{"event":["b"]}]}`, fpAttrs{"event": fpStr("b")}, true),
		Entry("$or: no branch matches", `{"$or":[{"store":["a"]},{"event":["b"]}]}`, fpAttrs{"event": fpStr("c")}, false),
		Entry("$or with a key outside it: both must hold", `{"source":["aws.cloudwatch"],"$or":[{"metricName":["CPUUtilization"]},{"namespace":["AWS/EC2"]}]}`, fpAttrs{"source": fpStr("aws.cloudwatch"), "namespace": fpStr("AWS/EC2")}, true),
	)

	DescribeTable("in MessageBody scope",
		func(ctx SpecContext, policy, body string, match bool) {
			filterCase(ctx, bodyScope, policy, body, nil, match)
		},
		Entry("#5 exact string in the body", `{"customer_interests":["rugby","tennis"]}`, `{"customer_interests":"tennis"}`, true),
		Entry("exact string in the body does not match another", `{"customer_interests":["rugby","tennis"]}`, `{"customer_interests":"golf"}`, false),
		Entry("#10 anything-but on a body array: one element is not excluded (DOC string-value-matching, 2022)", `{"customer_interests":[{"anything-but":["rugby","tennis"]}]}`, `{"customer_interests":["rugby","baseball"]}`, true),
		Entry("#11 anything-but on a body array of excluded values", `{"customer_interests":[{"anything-but":["rugby","tennis"]}]}`, `{"customer_interests":["rugby"]}`, false),
		Entry("#19 anything-but numbers on a body array (DOC numeric-value-matching)", `{"price":[{"anything-but":[100,500]}]}`, `{"price":[100,50]}`, true),
		Entry("prefix in the body", `{"event":[{"prefix":"order-"}]}`, `{"event":"order-placed"}`, true),
		Entry("suffix in the body", `{"event":[{"suffix":"-placed"}]}`, `{"event":"order-placed"}`, true),
		Entry("equals-ignore-case in the body", `{"event":[{"equals-ignore-case":"ORDER"}]}`, `{"event":"order"}`, true),
		Entry("numeric range in the body", `{"price":[{"numeric":[">=",10,"<",20]}]}`, `{"price":19.99}`, true),
		Entry("numeric range in the body, outside", `{"price":[{"numeric":[">=",10,"<",20]}]}`, `{"price":20}`, false),
		Entry("a number literal does not match a JSON string", `{"price":[10]}`, `{"price":"10"}`, false),
		Entry("true literal matches a JSON true", `{"paid":[true]}`, `{"paid":true}`, true),
		Entry("null literal matches a JSON null", `{"coupon":[null]}`, `{"coupon":null}`, true),
		Entry("exists true on a present key", `{"coupon":[{"exists":true}]}`, `{"coupon":"X1"}`, true),
		Entry("exists false on an absent key", `{"coupon":[{"exists":false}]}`, `{"price":1}`, true),
		Entry("cidr in the body", `{"ip":[{"cidr":"10.0.0.0/24"}]}`, `{"ip":"10.0.0.7"}`, true),
		Entry("nested keys reach into objects (DOC sns-message-filtering)", `{"order":{"status":["paid"]}}`, `{"order":{"status":"paid","id":7}}`, true),
		Entry("nested keys do not match another value", `{"order":{"status":["paid"]}}`, `{"order":{"status":"open"}}`, false),
		// LS-AWS test_filter_policy_on_message_body.
		Entry("#33 nested prefix with absent keys", `{"object":{"key":[{"prefix":"auto-"},"hardcodedvalue"],"nested_key":[{"exists":false}]},"test":[{"exists":false}]}`, `{"object":{"key":"auto-test"}}`, true),
		Entry("#34 nested exact value", `{"object":{"key":[{"prefix":"auto-"},"hardcodedvalue"],"nested_key":[{"exists":false}]},"test":[{"exists":false}]}`, `{"object":{"key":"hardcodedvalue"}}`, true),
		Entry("#35 nested value matching neither", `{"object":{"key":[{"prefix":"auto-"},"hardcodedvalue"],"nested_key":[{"exists":false}]},"test":[{"exists":false}]}`, `{"object":{"key":"test-auto"}}`, false),
		Entry("#36 a key that must be absent is present at the top", `{"object":{"key":[{"prefix":"auto-"},"hardcodedvalue"],"nested_key":[{"exists":false}]},"test":[{"exists":false}]}`, `{"object":{"key":"auto-test"},"test":"just-exists"}`, false),
		Entry("#37 a key that must be absent is present inside", `{"object":{"key":[{"prefix":"auto-"},"hardcodedvalue"],"nested_key":[{"exists":false}]},"test":[{"exists":false}]}`, `{"object":{"key":"auto-test","nested_key":"just-exists"}}`, false),
		Entry("#39 a body that is not JSON never matches", `{"object":{"key":[{"prefix":"auto-"}]}}`, `Regular string message`, false),
		Entry("#40 a body that is a JSON string never matches", `{"object":{"key":[{"prefix":"auto-"}]}}`, `"Regular string message"`, false),
		// LS-AWS test_filter_policy_on_message_body_dot_attribute.
		Entry("#41 a dotted key reaches a nested path", `{"object.nested":["string.value"]}`, `{"object":{"nested":"string.value"}}`, true),
		Entry("#42 a dotted key matches a literal dotted key", `{"object.nested":["string.value"]}`, `{"object.nested":"string.value"}`, true),
		// LS-AWS test_filter_policy_on_message_body_array_attributes.
		Entry("#44 an array in the body matches if an element does", `{"headers":{"route-to":["queue1"]}}`, `{"headers":{"route-to":["queue1","queue2"]}}`, true),
		Entry("#45 an array in the body without the element", `{"headers":{"route-to":["queue1"]}}`, `{"headers":{"route-to":["queue3"]}}`, false),
		// LS-AWS test_filter_policy_on_message_body_array_of_object_attributes.
		Entry("#46 arrays of objects: one record matches both keys", `{"Records":{"s3":{"object":{"key":[{"prefix":"auto-"}]}},"eventName":[{"prefix":"ObjectCreated:"}]}}`,
			`{"Records":[{"eventName":"ObjectCreated:Put","s3":{"object":{"key":"auto-insurance-2314.xml"}}}]}`, true),
		Entry("#47 arrays of objects: the record's event does not match", `{"Records":{"s3":{"object":{"key":[{"prefix":"auto-"}]}},"eventName":[{"prefix":"ObjectCreated:"}]}}`,
			`{"Records":[{"eventName":"ObjectRemoved:Delete","s3":{"object":{"key":"auto-insurance-2314.xml"}}}]}`, false),
		// LS-AWS test_filter_policy_on_message_body_or_attribute.
		Entry("#48 nested $or at two levels", `{"$or":[{"metricName":["CPUUtilization","ReadLatency"]},{"namespace":["AWS/EC2","AWS/ES"]}],"detail":{"scope":["Service"],"$or":[{"source":["aws.cloudwatch"]},{"type":["CloudWatch Alarm State Change"]}]}}`,
			`{"namespace":"AWS/EC2","detail":{"scope":"Service","source":"aws.cloudwatch"}}`, true),
		Entry("#49 nested $or: the inner $or has no match", `{"$or":[{"metricName":["CPUUtilization","ReadLatency"]},{"namespace":["AWS/EC2","AWS/ES"]}],"detail":{"scope":["Service"],"$or":[{"source":["aws.cloudwatch"]},{"type":["CloudWatch Alarm State Change"]}]}}`,
			`{"metricName":"CPUUtilization","detail":{"scope":"Service"}}`, false),
		// LS-AWS test_filter_policy_empty_array_payload.
		Entry("#51 an empty string value matches an empty string", `{"detail":{"eventVersion":[""]}}`, `{"resources":[],"detail":{"eventVersion":"","responseElements":null}}`, true),
		// LS-AWS test_filter_policy_ip_address_condition.
		Entry("#52 cidr in a nested $or, IPv4 inside", `{"detail":{"$or":[{"sourceIPAddress":[{"cidr":"10.0.0.0/24"}]},{"sourceIPAddressV6":[{"cidr":"2001:db8:1234:1a00::/64"}]}]}}`, `{"detail":{"sourceIPAddress":"10.0.0.255"}}`, true),
		Entry("#53 cidr: an invalid address never matches", `{"detail":{"$or":[{"sourceIPAddress":[{"cidr":"10.0.0.0/24"}]},{"sourceIPAddressV6":[{"cidr":"2001:db8:1234:1a00::/64"}]}]}}`, `{"detail":{"sourceIPAddress":"10.0.0.256"}}`, false),
		Entry("#54 cidr IPv6 in full notation, inside", `{"detail":{"$or":[{"sourceIPAddress":[{"cidr":"10.0.0.0/24"}]},{"sourceIPAddressV6":[{"cidr":"2001:db8:1234:1a00::/64"}]}]}}`, `{"detail":{"sourceIPAddressV6":"2001:0db8:1234:1a00:0000:0000:0000:0000"}}`, true),
		Entry("#55 cidr IPv6 outside", `{"detail":{"$or":[{"sourceIPAddress":[{"cidr":"10.0.0.0/24"}]},{"sourceIPAddressV6":[{"cidr":"2001:db8:1234:1a00::/64"}]}]}}`, `{"detail":{"sourceIPAddressV6":"2001:0db8:123f:1a01:0000:0000:0000:0000"}}`, false),
	)
})

// The validation errors of §5 of the reference, each recorded from AWS
// (LS-AWS test_subscribe_invalid_filter_policy and the policy validation tests,
// snapshots of 2024-05). AWS may append a Jackson location to the message
// ("\n at [Source: ...]"), so the check is on the prefix.
var _ = Describe("SNS filter policy validation", Label("sns-filter", "errors"), func() {
	DescribeTable("refuses on SetSubscriptionAttributes with InvalidParameter and AWS's message",
		func(ctx SpecContext, policy, msg string) {
			topic := createTopic(ctx, "fpv", nil)
			_, sub := subscribedQueue(ctx, topic, "fpv", nil, nil)
			_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{
				SubscriptionArn: aws.String(sub), AttributeName: aws.String("FilterPolicy"), AttributeValue: aws.String(policy),
			})
			Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", HavePrefix("Invalid parameter: FilterPolicy: "+msg)))
		},
		Entry("a nested array", `{"key":[["value"]]}`, "Match value must be String, number, true, false, or null"),
		Entry("an unknown operator", `{"key":[{"wrong-operator":true}]}`, "Unrecognized match type wrong-operator"),
		Entry("two operators in one object", `{"key":[{"suffix":"value","prefix":"value2"}]}`, "Only one key allowed in match expression"),
		Entry("an empty array", `{"key":[]}`, "Empty arrays are not allowed"),
		Entry("a suffix that is not a string", `{"key":[{"suffix":100}]}`, "suffix match pattern must be a string"),
		Entry("a prefix that is not a string", `{"key":[{"prefix":["a","b"]}]}`, "prefix match pattern must be a string"),
		Entry("an operator object instead of an array", `{"key":{"suffix":"value"}}`, `"suffix" must be an object or an array`),
		Entry("a plain string instead of an array", `{"key_a":"value_one"}`, `"key_a" must be an object or an array`),
		Entry("a cidr that is not a string", `{"key":[{"cidr":["bad-filter"]}]}`, "prefix match pattern must be a string"),
		Entry("a cidr without a slash", `{"key":[{"cidr":"bad-filter"}]}`, "Malformed CIDR, one '/' required"),
		Entry("a cidr with a bad address", `{"key":[{"cidr":"bad-filter/24"}]}`, "Nonstandard IP address: bad-filter"),
		Entry("an empty numeric", `{"key":[{"numeric":[]}]}`, "Invalid member in numeric match: ]"),
		Entry("an unknown numeric operator", `{"key":[{"numeric":["operator"]}]}`, "Unrecognized numeric range operator: operator"),
		Entry("a number where an operator belongs", `{"key":[{"numeric":[1,"<="]}]}`, "Invalid member in numeric match: 1"),
		Entry("a string where a number belongs", `{"key":[{"numeric":["=","000"]}]}`, "Value of equals must be numeric"),
		Entry("an operator without its value", `{"key":[{"numeric":[">="]}]}`, "Value of >= must be numeric"),
		Entry("a range given top first", `{"key":[{"numeric":["<",100,">",10]}]}`, "Too many elements in numeric expression"),
		Entry("two lower bounds", `{"key":[{"numeric":[">=",1,">",2]}]}`, "Bad numeric range operator: >"),
		Entry("a bottom above the top", `{"key":[{"numeric":[">",3,"<",1]}]}`, "Bottom must be less than top"),
		Entry("a range with a value but no operator", `{"key":[{"numeric":[">",20,30]}]}`, "Bad value in numeric range: 30"),
		Entry("three terms in a range", `{"key":[{"numeric":[">",20,"<",30,"<",50]}]}`, "Too many terms in numeric range expression"),
		Entry("exists that is not a boolean", `{"key":[{"exists":"no"}]}`, "exists match pattern must be either true or false."),
		Entry("anything-but with an unknown operator", `{"key":[{"anything-but":{"wrong-operator":null}}]}`, "Unsupported anything-but pattern: wrong-operator"),
		Entry("anything-but suffix", `{"key":[{"anything-but":{"suffix":"test"}}]}`, "Unsupported anything-but pattern: suffix"),
		Entry("anything-but exists", `{"key":[{"anything-but":{"exists":false}}]}`, "Unsupported anything-but pattern: exists"),
		Entry("anything-but prefix that is not a string", `{"key":[{"anything-but":{"prefix":false}}]}`, "prefix match pattern must be a string"),
		Entry("more than five keys", `{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"e":["1"],"f":["1"]}`, "Filter policy can not have more than 5 keys"),
		Entry("more than 150 combinations", `{"key":[`+strings.TrimSuffix(strings.Repeat(`"v",`, 151), ",")+`]}`, "Filter policy is too complex"),
		Entry("JSON that does not parse", `{invalid`, "failed to parse JSON."),
	)

	It("refuses on Subscribe with the Attributes prefix", func(ctx SpecContext) {
		// Recorded: test_subscribe_invalid_filter_policy.
		topic := createTopic(ctx, "fpv-sub", nil)
		q := createQueue(ctx, "fpv-sub", nil)
		_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(q.ARN),
			Attributes: map[string]string{"FilterPolicy": `{"key":[{"numeric":[">",3,"<",1]}]}`}})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", HavePrefix("Invalid parameter: Attributes Reason: FilterPolicy: Bottom must be less than top")))
	})

	It("refuses a nested policy in MessageAttributes scope", func(ctx SpecContext) {
		// Recorded: "Invalid parameter: Filter policy scope MessageAttributes
		// does not support nested filter policy".
		topic := createTopic(ctx, "fpv-nested", nil)
		_, sub := subscribedQueue(ctx, topic, "fpv-nested", nil, nil)
		_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{
			SubscriptionArn: aws.String(sub), AttributeName: aws.String("FilterPolicy"), AttributeValue: aws.String(`{"a":{"b":["c"]}}`),
		})
		Expect(err).To(BeAWSError(http.StatusBadRequest, "InvalidParameter", "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy"))
	})

	It("accepts a nested policy in MessageBody scope", func(ctx SpecContext) {
		// DOC sns-message-filtering: body policies may nest.
		topic := createTopic(ctx, "fpv-body", nil)
		_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(createQueue(ctx, "fpv-body", nil).ARN),
			Attributes: map[string]string{"FilterPolicyScope": bodyScope, "FilterPolicy": `{"a":{"b":["c"]}}`}, ReturnSubscriptionArn: true})
		Expect(err).NotTo(HaveOccurred())
	})
})
