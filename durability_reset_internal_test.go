package fanout

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout/internal/sdktest"
)

// dirBytes is the size of the files in dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}

func postReset(t *testing.T, s *Server, query string) {
	t.Helper()
	resp, err := http.Post(s.URL()+"/_fanout/reset"+query, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reset%s: %s", query, resp.Status)
	}
}

// POST /_fanout/reset?account= and POST /_fanout/reset reach the data dir
// (topics, queues and messages):
// after a restart nothing they deleted comes back, and a full reset gives
// the disk space back at once.
func TestResetClearsTheDataDir(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	start := func() *Server {
		s, err := Start(ctx, Options{DataDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	keys := map[string]string{"default": "AKIDTEST", "other": "111111111111"}
	client := func(s *Server, who string) *sns.Client { return snsAs(s, keys[who], "us-east-1") }
	queues := func(s *Server, who string) *sqs.Client {
		cfg := sdktest.Config()
		cfg.Credentials = credentials.NewStaticCredentialsProvider(keys[who], "secret", "")
		return sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(s.URL()) })
	}
	// count is the topics, queues and messages who sees.
	count := func(s *Server, who string) (n int) {
		n = len(topicNames(t, client(s, who)))
		l, err := queues(s, who).ListQueues(ctx, &sqs.ListQueuesInput{})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range l.QueueUrls {
			a, err := queues(s, who).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u), AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages"}})
			if err != nil {
				t.Fatal(err)
			}
			m, _ := strconv.Atoi(a.Attributes["ApproximateNumberOfMessages"])
			n += 1 + m
		}
		return n
	}

	s := start()
	tags := make([]snstypes.Tag, 20)
	for i := range tags {
		tags[i] = snstypes.Tag{Key: aws.String("k" + strconv.Itoa(i)), Value: aws.String(string(make([]byte, 200)))}
	}
	for _, who := range []string{"default", "other"} {
		for i := range 40 {
			if _, err := client(s, who).CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(who + strconv.Itoa(i)), Tags: tags}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, who := range []string{"default", "other"} {
		q, err := queues(s, who).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("q-" + who)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			if _, err := queues(s, who).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String(strconv.Itoa(i))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	const each = 40 + 1 + 50 // topics, the queue, its messages
	postReset(t, s, "?account=111111111111")
	s.Close()

	s = start()
	if d, o := count(s, "default"), count(s, "other"); d != each || o != 0 {
		t.Fatalf("after an account reset and a restart: %d topics, queues and messages in the default account, %d in the reset one; want %d and 0", d, o, each)
	}
	before := dirBytes(t, dir)
	postReset(t, s, "")
	after := dirBytes(t, dir)
	if after*10 > before {
		t.Errorf("a full reset left %d of %d bytes on disk", after, before)
	}
	t.Logf("data dir: %d bytes before the full reset, %d after", before, after)
	s.Close()

	s = start()
	defer s.Close()
	if d, o := count(s, "default"), count(s, "other"); d != 0 || o != 0 {
		t.Fatalf("after a full reset and a restart: %d and %d topics, queues and messages, want none", d, o)
	}
}
