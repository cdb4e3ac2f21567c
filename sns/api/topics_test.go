package api_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/fanout/fanout"
)

func TestCreateTopicIsIdempotentAndChecksAttributesAndTags(t *testing.T) {
	t.Parallel()
	e := shared(t)
	n := name(t, "t")
	in := &sns.CreateTopicInput{
		Name:       aws.String(n),
		Attributes: map[string]string{"DisplayName": "Orders"},
		Tags:       []types.Tag{{Key: aws.String("team"), Value: aws.String("core")}},
	}
	first, err := e.sns.CreateTopic(ctx(t), in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := aws.ToString(first.TopicArn), "arn:aws:sns:us-east-1:000000000000:"+n; got != want {
		t.Fatalf("TopicArn = %s, want %s", got, want)
	}
	again, err := e.sns.CreateTopic(ctx(t), in)
	if err != nil || aws.ToString(again.TopicArn) != aws.ToString(first.TopicArn) {
		t.Fatalf("same request again: %v, %v", again, err)
	}
	// No attributes or tags at all also returns the topic.
	if _, err := e.sns.CreateTopic(ctx(t), &sns.CreateTopicInput{Name: aws.String(n)}); err != nil {
		t.Fatal(err)
	}
	_, err = e.sns.CreateTopic(ctx(t), &sns.CreateTopicInput{Name: aws.String(n), Attributes: map[string]string{"DisplayName": "Other"}})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: Attributes Reason: Topic already exists with different attributes")
	_, err = e.sns.CreateTopic(ctx(t), &sns.CreateTopicInput{Name: aws.String(n), Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("other")}}})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: Tags Reason: Topic already exists with different tags")
}

func TestCreateTopicRejectsBadNamesAndAttributes(t *testing.T) {
	t.Parallel()
	e := shared(t)
	for _, tc := range []struct {
		name  string
		attrs map[string]string
		tags  []types.Tag
		msg   string
	}{
		{"bad name!", nil, nil, "Invalid parameter: Topic Name"},
		{strings.Repeat("a", 257), nil, nil, "Invalid parameter: Topic Name"},
		{name(t, "x") + ".fifo", nil, nil, "Invalid parameter: Topic Name"},
		{name(t, "x"), map[string]string{"FifoTopic": "true"}, nil,
			"Fifo Topic names must end with .fifo and must be made up of only uppercase and lowercase ASCII letters, numbers, underscores, and hyphens, and must be between 1 and 256 characters long."},
		{name(t, "x"), map[string]string{"ContentBasedDeduplication": "true"}, nil,
			"Invalid parameter: Attributes Reason: ContentBasedDeduplication: Content-based deduplication can only be set for FIFO topics"},
		{name(t, "x"), map[string]string{"DeliveryPolicy": `{"http":{"defaultHealthyRetryPolicy":{"numRetries":5}}}`}, nil,
			"Invalid parameter: Attributes Reason: DeliveryPolicy: http.defaultHealthyRetryPolicy.minDelayTarget must be specified"},
		{name(t, "x"), map[string]string{"Nope": "1"}, nil, "Invalid parameter: Attributes Reason: AttributeName"},
		{name(t, "x"), nil, []types.Tag{{Key: aws.String("k"), Value: aws.String("1")}, {Key: aws.String("k"), Value: aws.String("2")}},
			"Invalid parameter: Duplicated keys are not allowed."},
	} {
		_, err := e.sns.CreateTopic(ctx(t), &sns.CreateTopicInput{Name: aws.String(tc.name), Attributes: tc.attrs, Tags: tc.tags})
		wantError(t, err, "InvalidParameter", 400, tc.msg)
	}
}

func TestTopicAttributesDefaults(t *testing.T) {
	t.Parallel()
	e := shared(t)
	arn := e.topic(t, "std", nil)
	out, err := e.sns.GetTopicAttributes(ctx(t), &sns.GetTopicAttributesInput{TopicArn: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"DisplayName", "EffectiveDeliveryPolicy", "Owner", "Policy", "SubscriptionsConfirmed", "SubscriptionsDeleted", "SubscriptionsPending", "TopicArn"}
	if got := slices.Sorted(maps.Keys(out.Attributes)); !slices.Equal(got, want) {
		t.Fatalf("attributes %v, want %v", got, want)
	}
	a := out.Attributes
	if a["TopicArn"] != arn || a["Owner"] != "000000000000" || a["DisplayName"] != "" || a["SubscriptionsConfirmed"] != "0" {
		t.Fatalf("attributes %v", a)
	}
	wantPolicy := `{"Version":"2008-10-17","Id":"__default_policy_ID","Statement":[{"Sid":"__default_statement_ID","Effect":"Allow","Principal":{"AWS":"*"},"Action":["SNS:GetTopicAttributes","SNS:SetTopicAttributes","SNS:AddPermission","SNS:RemovePermission","SNS:DeleteTopic","SNS:Subscribe","SNS:ListSubscriptionsByTopic","SNS:Publish"],"Resource":"` + arn + `","Condition":{"StringEquals":{"AWS:SourceOwner":"000000000000"}}}]}`
	if a["Policy"] != wantPolicy {
		t.Fatalf("Policy %s", a["Policy"])
	}
	wantEffective := `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}`
	if a["EffectiveDeliveryPolicy"] != wantEffective {
		t.Fatalf("EffectiveDeliveryPolicy %s", a["EffectiveDeliveryPolicy"])
	}

	fifo := e.topic(t, "fifo", map[string]string{"FifoTopic": "true"})
	out, err = e.sns.GetTopicAttributes(ctx(t), &sns.GetTopicAttributesInput{TopicArn: aws.String(fifo)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Attributes["FifoTopic"] != "true" || out.Attributes["ContentBasedDeduplication"] != "false" || len(out.Attributes) != len(want)+2 {
		t.Fatalf("FIFO attributes %v", out.Attributes)
	}
}

func TestSetTopicAttributes(t *testing.T) {
	t.Parallel()
	e := shared(t)
	arn := e.topic(t, "t", nil)
	set := func(n, v string) error {
		_, err := e.sns.SetTopicAttributes(ctx(t), &sns.SetTopicAttributesInput{TopicArn: aws.String(arn), AttributeName: aws.String(n), AttributeValue: aws.String(v)})
		return err
	}
	attrs := func() map[string]string {
		out, err := e.sns.GetTopicAttributes(ctx(t), &sns.GetTopicAttributesInput{TopicArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		return out.Attributes
	}
	for n, v := range map[string]string{
		"DisplayName":                  "Orders",
		"SignatureVersion":             "2",
		"TracingConfig":                "Active",
		"KmsMasterKeyId":               "alias/aws/sns",
		"SQSSuccessFeedbackRoleArn":    "arn:aws:iam::000000000000:role/feedback",
		"SQSSuccessFeedbackSampleRate": "50",
	} {
		if err := set(n, v); err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if got := attrs()[n]; got != v {
			t.Fatalf("%s = %q, want %q", n, got, v)
		}
	}
	if err := set("DeliveryPolicy", `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":6,"numRetries":1}}}`); err != nil {
		t.Fatal(err)
	}
	a := attrs()
	if a["DeliveryPolicy"] != `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":6,"numRetries":1},"disableSubscriptionOverrides":false}}` {
		t.Fatalf("DeliveryPolicy %s", a["DeliveryPolicy"])
	}
	if !strings.Contains(a["EffectiveDeliveryPolicy"], `"minDelayTarget":5,"maxDelayTarget":6,"numRetries":1,`) {
		t.Fatalf("EffectiveDeliveryPolicy %s", a["EffectiveDeliveryPolicy"])
	}
	if err := set("DeliveryPolicy", ""); err != nil || attrs()["DeliveryPolicy"] != "" {
		t.Fatalf("removing DeliveryPolicy: %v", err)
	}
	for _, tc := range []struct{ name, value, msg string }{
		{"FifoTopic", "true", "Invalid parameter: AttributeName"},
		{"Unknown", "x", "Invalid parameter: AttributeName"},
		{"SignatureVersion", "3", "Invalid parameter: SignatureVersion: Invalid value [3]. Must be 1 or 2."},
		{"Policy", "{not json", "Invalid parameter: Policy Error: null"},
		{"ArchivePolicy", `{"MessageRetentionPeriod":"2"}`, "Invalid parameter: ArchivePolicy: message archiving is only available for FIFO topics"},
		{"DeliveryPolicy", `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":0,"maxDelayTarget":6,"numRetries":1}}}`,
			"Invalid parameter: DeliveryPolicy: http.defaultHealthyRetryPolicy.minDelayTarget must be greater than or equal to 1"},
	} {
		wantError(t, set(tc.name, tc.value), "InvalidParameter", 400, tc.msg)
	}
}

func TestMaximumMessageSizeRaisesThePublishLimit(t *testing.T) {
	t.Parallel()
	e := shared(t)
	arn := e.topic(t, "t", nil)
	big := strings.Repeat("x", 300*1024)
	_, err := e.sns.Publish(ctx(t), &sns.PublishInput{TopicArn: aws.String(arn), Message: aws.String(big)})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: Message too long")
	if _, err := e.sns.SetTopicAttributes(ctx(t), &sns.SetTopicAttributesInput{TopicArn: aws.String(arn), AttributeName: aws.String("MaximumMessageSize"), AttributeValue: aws.String("1048576")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sns.Publish(ctx(t), &sns.PublishInput{TopicArn: aws.String(arn), Message: aws.String(big)}); err != nil {
		t.Fatal(err)
	}
	_, err = e.sns.SetTopicAttributes(ctx(t), &sns.SetTopicAttributesInput{TopicArn: aws.String(arn), AttributeName: aws.String("MaximumMessageSize"), AttributeValue: aws.String("1048577")})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: MaximumMessageSize: Invalid value [1048577]. Must be an integer from 1024 to 1048576.")
}

func TestMissingTopicsAndMalformedArns(t *testing.T) {
	t.Parallel()
	e := shared(t)
	missing := "arn:aws:sns:us-east-1:000000000000:" + name(t, "gone")
	_, err := e.sns.GetTopicAttributes(ctx(t), &sns.GetTopicAttributesInput{TopicArn: aws.String(missing)})
	wantError(t, err, "NotFound", 404, "Topic does not exist")
	var nf *types.NotFoundException
	if !errorsAs(err, &nf) {
		t.Fatalf("not a NotFoundException: %T", err)
	}
	_, err = e.sns.SetTopicAttributes(ctx(t), &sns.SetTopicAttributesInput{TopicArn: aws.String(missing), AttributeName: aws.String("DisplayName"), AttributeValue: aws.String("x")})
	wantError(t, err, "NotFound", 404, "Topic does not exist")
	_, err = e.sns.Publish(ctx(t), &sns.PublishInput{TopicArn: aws.String(missing), Message: aws.String("m")})
	wantError(t, err, "NotFound", 404, "Topic does not exist")
	_, err = e.sns.ListSubscriptionsByTopic(ctx(t), &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(missing)})
	wantError(t, err, "NotFound", 404, "Topic does not exist")

	_, err = e.sns.GetTopicAttributes(ctx(t), &sns.GetTopicAttributesInput{TopicArn: aws.String("not:an:arn")})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: TopicArn Reason: An ARN must have at least 6 elements, not 3")
	_, err = e.sns.GetTopicAttributes(ctx(t), &sns.GetTopicAttributesInput{TopicArn: aws.String("arn:aws:sns:eu-west-1:000000000000:t")})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: TopicArn")
	other := "arn:aws:sns:us-east-1:111111111111:t"
	_, err = e.sns.GetTopicAttributes(ctx(t), &sns.GetTopicAttributesInput{TopicArn: aws.String(other)})
	wantError(t, err, "AuthorizationError", 403, "User: arn:aws:iam::000000000000:root is not authorized to perform: SNS:GetTopicAttributes on resource: "+other+" because no resource-based policy allows the SNS:GetTopicAttributes action")
	// Deleting a topic that does not exist succeeds.
	if _, err := e.sns.DeleteTopic(ctx(t), &sns.DeleteTopicInput{TopicArn: aws.String(missing)}); err != nil {
		t.Fatal(err)
	}
}

func TestDeleteTopicRemovesItsSubscriptions(t *testing.T) {
	t.Parallel()
	e := shared(t)
	arn := e.topic(t, "t", nil)
	q := e.queue(t, "q", nil)
	sub := e.subscribe(t, arn, q, nil)
	if _, err := e.sns.DeleteTopic(ctx(t), &sns.DeleteTopicInput{TopicArn: aws.String(arn)}); err != nil {
		t.Fatal(err)
	}
	_, err := e.sns.GetSubscriptionAttributes(ctx(t), &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
	wantError(t, err, "NotFound", 404, "Subscription does not exist")
	list, err := e.sns.ListSubscriptions(ctx(t), &sns.ListSubscriptionsInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Subscriptions {
		if aws.ToString(s.SubscriptionArn) == sub {
			t.Fatal("subscription of a deleted topic still listed")
		}
	}
	// A topic of the same name starts afresh.
	again := e.topicNamed(t, strings.TrimPrefix(arn, "arn:aws:sns:us-east-1:000000000000:"))
	out, err := e.sns.ListSubscriptionsByTopic(ctx(t), &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(again)})
	if err != nil || len(out.Subscriptions) != 0 {
		t.Fatalf("recreated topic has %v, %v", out, err)
	}
}

func (e *env) topicNamed(t *testing.T, n string) string {
	t.Helper()
	out, err := e.sns.CreateTopic(ctx(t), &sns.CreateTopicInput{Name: aws.String(n)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.TopicArn)
}

func TestListTopicsPagesByHundred(t *testing.T) {
	t.Parallel()
	e := start(t, fanout.Options{})
	want := map[string]bool{}
	for i := 0; i < 230; i++ {
		want[e.topic(t, "t", nil)] = true
	}
	var pages []int
	got := map[string]bool{}
	p := sns.NewListTopicsPaginator(e.sns, &sns.ListTopicsInput{})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, len(out.Topics))
		for _, tp := range out.Topics {
			got[aws.ToString(tp.TopicArn)] = true
		}
	}
	if !slices.Equal(pages, []int{100, 100, 30}) || !maps.Equal(got, want) {
		t.Fatalf("pages %v, %d topics", pages, len(got))
	}
	_, err := e.sns.ListTopics(ctx(t), &sns.ListTopicsInput{NextToken: aws.String("!!")})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: NextToken")
}

func TestTags(t *testing.T) {
	t.Parallel()
	e := shared(t)
	arn := e.topic(t, "t", nil)
	tag := func(kv ...string) []types.Tag {
		var out []types.Tag
		for i := 0; i < len(kv); i += 2 {
			out = append(out, types.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1])})
		}
		return out
	}
	list := func() []string {
		out, err := e.sns.ListTagsForResource(ctx(t), &sns.ListTagsForResourceInput{ResourceArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, tg := range out.Tags {
			s = append(s, aws.ToString(tg.Key)+"="+aws.ToString(tg.Value))
		}
		return s
	}
	if _, err := e.sns.TagResource(ctx(t), &sns.TagResourceInput{ResourceArn: aws.String(arn), Tags: tag("b", "2", "a", "1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sns.TagResource(ctx(t), &sns.TagResourceInput{ResourceArn: aws.String(arn), Tags: tag("b", "3")}); err != nil {
		t.Fatal(err)
	}
	if got := list(); !slices.Equal(got, []string{"a=1", "b=3"}) {
		t.Fatalf("tags %v", got)
	}
	if _, err := e.sns.UntagResource(ctx(t), &sns.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: []string{"a", "zzz"}}); err != nil {
		t.Fatal(err)
	}
	if got := list(); !slices.Equal(got, []string{"b=3"}) {
		t.Fatalf("tags %v", got)
	}
	_, err := e.sns.TagResource(ctx(t), &sns.TagResourceInput{ResourceArn: aws.String(arn), Tags: tag("k", "1", "k", "2")})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: Duplicated keys are not allowed.")
	var many []string
	for i := 0; i < 50; i++ {
		many = append(many, "k"+strings.Repeat("x", i), "v")
	}
	_, err = e.sns.TagResource(ctx(t), &sns.TagResourceInput{ResourceArn: aws.String(arn), Tags: tag(many...)})
	wantError(t, err, "TagLimitExceeded", 400, "Could not complete request: tag quota of per resource exceeded")
	missing := "arn:aws:sns:us-east-1:000000000000:" + name(t, "gone")
	_, err = e.sns.ListTagsForResource(ctx(t), &sns.ListTagsForResourceInput{ResourceArn: aws.String(missing)})
	wantError(t, err, "ResourceNotFound", 404, "Resource does not exist")
}

func TestAddAndRemovePermission(t *testing.T) {
	t.Parallel()
	e := shared(t)
	arn := e.topic(t, "t", nil)
	policy := func() string {
		out, err := e.sns.GetTopicAttributes(ctx(t), &sns.GetTopicAttributesInput{TopicArn: aws.String(arn)})
		if err != nil {
			t.Fatal(err)
		}
		return out.Attributes["Policy"]
	}
	if _, err := e.sns.AddPermission(ctx(t), &sns.AddPermissionInput{
		TopicArn: aws.String(arn), Label: aws.String("pub"),
		AWSAccountId: []string{"111122223333"}, ActionName: []string{"Publish"},
	}); err != nil {
		t.Fatal(err)
	}
	want := `{"Sid":"pub","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:root"},"Action":"SNS:Publish","Resource":"` + arn + `"}`
	if p := policy(); !strings.Contains(p, want) || !strings.Contains(p, "__default_statement_ID") {
		t.Fatalf("Policy %s", p)
	}
	_, err := e.sns.AddPermission(ctx(t), &sns.AddPermissionInput{
		TopicArn: aws.String(arn), Label: aws.String("pub"), AWSAccountId: []string{"111122223333"}, ActionName: []string{"Publish"},
	})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: Statement already exists")
	_, err = e.sns.AddPermission(ctx(t), &sns.AddPermissionInput{
		TopicArn: aws.String(arn), Label: aws.String("sqs"), AWSAccountId: []string{"111122223333"}, ActionName: []string{"SendMessage"},
	})
	wantError(t, err, "InvalidParameter", 400, "Invalid parameter: Policy statement action out of service scope!")
	if _, err := e.sns.RemovePermission(ctx(t), &sns.RemovePermissionInput{TopicArn: aws.String(arn), Label: aws.String("pub")}); err != nil {
		t.Fatal(err)
	}
	if p := policy(); strings.Contains(p, `"pub"`) || !strings.Contains(p, "__default_statement_ID") {
		t.Fatalf("Policy after RemovePermission %s", p)
	}
}
