package api_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"
)

func strAttr(v string) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
}

func TestPublishReturnsAMessageIDAndAcceptsTargetArn(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	out := e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m")})
	if !uuid.MatchString(aws.ToString(out.MessageId)) || out.SequenceNumber != nil {
		t.Fatalf("Publish = %s, %v", aws.ToString(out.MessageId), out.SequenceNumber)
	}
	out = e.publish(t, &sns.PublishInput{TargetArn: aws.String(topic), Message: aws.String("m")})
	if !uuid.MatchString(aws.ToString(out.MessageId)) {
		t.Fatalf("TargetArn publish = %s", aws.ToString(out.MessageId))
	}
	// A standard topic takes a MessageGroupId (it goes on to fair queues).
	e.publish(t, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("m"), MessageGroupId: aws.String("g")})
}

func TestPublishValidation(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	fifo := e.topic(t, "f", map[string]string{"FifoTopic": "true"})
	long := strings.Repeat("x", 256*1024-3)
	for _, tc := range []struct {
		what string
		in   sns.PublishInput
		code string
		msg  string
	}{
		{"empty message", sns.PublishInput{TopicArn: &topic, Message: aws.String("")}, "InvalidParameter", "Invalid parameter: Empty message"},
		{"empty subject", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), Subject: aws.String("")}, "InvalidParameter", "Invalid parameter: Subject"},
		{"long subject", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), Subject: aws.String(strings.Repeat("s", 101))}, "InvalidParameter", "Invalid parameter: Subject"},
		{"subject with a newline", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), Subject: aws.String("a\nb")}, "InvalidParameter", "Invalid parameter: Subject"},
		{"no target", sns.PublishInput{Message: aws.String("m")}, "InvalidParameter", "Invalid parameter: TopicArn or TargetArn Reason: no value for required parameter"},
		{"platform endpoint", sns.PublishInput{TargetArn: aws.String("arn:aws:sns:us-east-1:000000000000:endpoint/GCM/app/1"), Message: aws.String("m")},
			"InvalidParameter", "Invalid parameter: TargetArn Reason: No endpoint found for the target arn specified"},
		{"too long with attributes", sns.PublishInput{TopicArn: &topic, Message: aws.String(long), MessageAttributes: map[string]types.MessageAttributeValue{"ab": strAttr("c")}},
			"InvalidParameter", "Invalid parameter: Message too long"},
		{"structure without default", sns.PublishInput{TopicArn: &topic, Message: aws.String(`{"sqs":"x"}`), MessageStructure: aws.String("json")},
			"InvalidParameter", "Invalid parameter: Message Structure - No default entry in JSON message body"},
		{"structure not JSON", sns.PublishInput{TopicArn: &topic, Message: aws.String(`default`), MessageStructure: aws.String("json")},
			"InvalidParameter", "Invalid parameter: Message Structure - JSON message body failed to parse"},
		{"dedup id on a standard topic", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), MessageDeduplicationId: aws.String("d")},
			"InvalidParameter", "Invalid parameter: MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type"},
		{"FIFO without group", sns.PublishInput{TopicArn: &fifo, Message: aws.String("m"), MessageDeduplicationId: aws.String("d")},
			"InvalidParameter", "Invalid parameter: The MessageGroupId parameter is required for FIFO topics"},
		{"FIFO without dedup", sns.PublishInput{TopicArn: &fifo, Message: aws.String("m"), MessageGroupId: aws.String("g")},
			"InvalidParameter", "Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly"},
		{"attribute type", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), MessageAttributes: map[string]types.MessageAttributeValue{
			"a": {DataType: aws.String("Integer"), StringValue: aws.String("1")}}},
			"ParameterValueInvalid", "The message attribute 'a' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String."},
		{"empty string attribute", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), MessageAttributes: map[string]types.MessageAttributeValue{
			"attr1": {DataType: aws.String("String"), StringValue: aws.String("")}}},
			"ParameterValueInvalid", "The message attribute 'attr1' must contain non-empty message attribute value for message attribute type 'String'."},
		{"number in the binary field", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), MessageAttributes: map[string]types.MessageAttributeValue{
			"attr1": {DataType: aws.String("Number"), BinaryValue: []byte{1}}}},
			"ParameterValueInvalid", "The message attribute 'attr1' with type 'Number' must use field 'String'."},
		{"binary in the string field", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), MessageAttributes: map[string]types.MessageAttributeValue{
			"attr1": {DataType: aws.String("Binary"), StringValue: aws.String("x")}}},
			"ParameterValueInvalid", "The message attribute 'attr1' with type 'Binary' must use field 'Binary'."},
		{"not a number", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), MessageAttributes: map[string]types.MessageAttributeValue{
			"price": {DataType: aws.String("Number"), StringValue: aws.String("ten")}}},
			"ParameterValueInvalid", "Could not cast message attribute 'price' value to number."},
		{"attribute name character", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), MessageAttributes: map[string]types.MessageAttributeValue{"a^b": strAttr("v")}},
			"ParameterValueInvalid", "Invalid non-alphanumeric character '#x5E' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots."},
		{"attribute name dot", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), MessageAttributes: map[string]types.MessageAttributeValue{".a": strAttr("v")}},
			"ParameterValueInvalid", "Invalid message attribute name starting with character '.' was found."},
		{"attribute name dots", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), MessageAttributes: map[string]types.MessageAttributeValue{"a..b": strAttr("v")}},
			"ParameterValueInvalid", "Message attribute name can not have successive '.' character."},
		{"attribute name length", sns.PublishInput{TopicArn: &topic, Message: aws.String("m"), MessageAttributes: map[string]types.MessageAttributeValue{strings.Repeat("n", 256): strAttr("v")}},
			"ParameterValueInvalid", "Length of message attribute name must be less than 256 bytes."},
	} {
		_, err := e.sns.Publish(ctx(t), &tc.in)
		got := errorOf(t, err)
		if got.Code != tc.code || got.Message != tc.msg || got.Status != 400 {
			t.Errorf("%s: %+v\nwant %s %q", tc.what, got, tc.code, tc.msg)
		}
	}
}

func TestPublishBatch(t *testing.T) {
	t.Parallel()
	e := shared(t)
	topic := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	e.subscribe(t, topic, q, map[string]string{"RawMessageDelivery": "true"})
	entry := func(id, msg string) types.PublishBatchRequestEntry {
		return types.PublishBatchRequestEntry{Id: aws.String(id), Message: aws.String(msg)}
	}
	out, err := e.sns.PublishBatch(ctx(t), &sns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: []types.PublishBatchRequestEntry{
		entry("one", "first"), entry("two", ""), entry("three", "third"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Successful) != 2 || aws.ToString(out.Successful[0].Id) != "one" || aws.ToString(out.Successful[1].Id) != "three" || out.Successful[0].MessageId == nil {
		t.Fatalf("Successful %+v", out.Successful)
	}
	if len(out.Failed) != 1 || aws.ToString(out.Failed[0].Id) != "two" || aws.ToString(out.Failed[0].Code) != "InvalidParameter" ||
		aws.ToString(out.Failed[0].Message) != "Invalid parameter: Empty message" || !out.Failed[0].SenderFault {
		t.Fatalf("Failed %+v", out.Failed)
	}
	if got := bodies(t, e.drain(t, q), false); strings.Join(got, ",") != "first,third" {
		t.Fatalf("queue got %v", got)
	}

	var eleven []types.PublishBatchRequestEntry
	for i := 0; i < 11; i++ {
		eleven = append(eleven, entry("e"+strings.Repeat("x", i), "m"))
	}
	for _, tc := range []struct {
		entries []types.PublishBatchRequestEntry
		code    string
		msg     string
	}{
		{[]types.PublishBatchRequestEntry{}, "EmptyBatchRequest", "The batch request doesn't contain any entries."},
		{eleven, "TooManyEntriesInBatchRequest", "The batch request contains more entries than permissible."},
		{[]types.PublishBatchRequestEntry{entry("a", "1"), entry("a", "2")}, "BatchEntryIdsNotDistinct", "Two or more batch entries in the request have the same Id."},
		{[]types.PublishBatchRequestEntry{entry("a b", "1")}, "InvalidBatchEntryId", "The Id of a batch entry in the batch request contains an impermissible character: a b"},
		{[]types.PublishBatchRequestEntry{entry(strings.Repeat("i", 81), "1")}, "InvalidBatchEntryId", "The Id of a batch entry in the batch request is too long: " + strings.Repeat("i", 81)},
		{[]types.PublishBatchRequestEntry{entry("a", strings.Repeat("x", 200*1024)), entry("b", strings.Repeat("x", 100*1024))},
			"BatchRequestTooLong", "The length of all the messages put together is more than the limit."},
		{[]types.PublishBatchRequestEntry{{Id: aws.String("a"), Message: aws.String("m"), MessageAttributes: map[string]types.MessageAttributeValue{
			"n": {DataType: aws.String("Number"), StringValue: aws.String("x")}}}},
			"ParameterValueInvalid", "Could not cast message attribute 'n' value to number."},
	} {
		_, err := e.sns.PublishBatch(ctx(t), &sns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: tc.entries})
		wantError(t, err, tc.code, 400, tc.msg)
	}
	missing := "arn:aws:sns:us-east-1:000000000000:" + name(t, "gone")
	_, err = e.sns.PublishBatch(ctx(t), &sns.PublishBatchInput{TopicArn: aws.String(missing), PublishBatchRequestEntries: []types.PublishBatchRequestEntry{entry("a", "m")}})
	wantError(t, err, "NotFound", 404, "Topic does not exist")
}
