package fanout

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/fanout/fanout/internal/sdktest"
)

func snsAs(s *Server, key, region string) *sns.Client {
	cfg := aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(key, "secret", ""), HTTPClient: sdktest.HTTPClient()}
	return sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(s.URL()) })
}

// With a data dir, every namespace's topics and subscriptions come back at
// the next start, including namespaces other than the default, which are
// otherwise only made on a first create.
func TestDataDirRestoresEveryNamespacesTopics(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	start := func() *Server {
		s, err := Start(ctx, Options{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	type nsState struct {
		Attrs map[string]string
		Tags  []snstypes.Tag
		Subs  []snstypes.Subscription
	}
	read := func(c *sns.Client, arn string) nsState {
		a, err := c.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: &arn})
		if err != nil {
			t.Fatal(err)
		}
		tags, err := c.ListTagsForResource(ctx, &sns.ListTagsForResourceInput{ResourceArn: &arn})
		if err != nil {
			t.Fatal(err)
		}
		subs, err := c.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: &arn})
		if err != nil {
			t.Fatal(err)
		}
		return nsState{a.Attributes, tags.Tags, subs.Subscriptions}
	}

	s := start()
	clients := map[string]*sns.Client{
		"default": snsAs(s, "AKIDTEST", "us-east-1"),
		"other":   snsAs(s, "111111111111", "eu-west-1"),
	}
	arns := map[string]string{}
	before := map[string]nsState{}
	for who, c := range clients {
		out, err := c.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("t-" + who),
			Attributes: map[string]string{"DisplayName": who}, Tags: []snstypes.Tag{{Key: aws.String("who"), Value: aws.String(who)}}})
		if err != nil {
			t.Fatal(err)
		}
		arns[who] = aws.ToString(out.TopicArn)
		if _, err := c.Subscribe(ctx, &sns.SubscribeInput{TopicArn: out.TopicArn, Protocol: aws.String("email"), Endpoint: aws.String(who + "@example.com")}); err != nil {
			t.Fatal(err)
		}
		before[who] = read(c, arns[who])
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = start()
	defer s.Close()
	for who, arn := range arns {
		c := snsAs(s, map[string]string{"default": "AKIDTEST", "other": "111111111111"}[who], map[string]string{"default": "us-east-1", "other": "eu-west-1"}[who])
		if got := read(c, arn); !reflect.DeepEqual(got, before[who]) {
			t.Errorf("%s namespace after a restart:\n%+v\nwant\n%+v", who, got, before[who])
		}
	}
}

func TestDurabilityOptionsAreChecked(t *testing.T) {
	for _, o := range []Options{
		{DataDir: t.TempDir(), Durability: Durability(7)},
		{DataDir: t.TempDir(), Durability: RelaxedDurability, SyncInterval: -time.Second},
	} {
		if s, err := New(o); err == nil {
			s.Close()
			t.Errorf("%+v accepted", o)
		}
	}
	for _, in := range []string{"strict", "relaxed"} {
		if d, err := ParseDurability(in); err != nil || d.String() != in {
			t.Errorf("%q: %v %v", in, d, err)
		}
	}
	if _, err := ParseDurability("fast"); err == nil {
		t.Error("fast accepted")
	}
}
