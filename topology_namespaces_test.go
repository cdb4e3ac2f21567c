package fanout_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/topology"
)

// TestResetAccountRecreatesItsTopology: a reset of one account makes again
// what the topology declares for it (its namespaces sections, and the
// root's for the default account), and nothing of the other accounts'.
func TestResetAccountRecreatesItsTopology(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file, err := topology.ReadFile("topology/testdata/namespaces.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, fanout.Options{Topology: file})
	def := clientsAs(s, "000000000000", "us-east-1")
	eu := clientsAs(s, "111111111111", "eu-west-1")
	other := clientsAs(s, "222222222222", "us-east-1")
	names := func(c nsClients) []string {
		t.Helper()
		out, err := c.sqs.ListQueues(ctx, &sqs.ListQueuesInput{})
		if err != nil {
			t.Fatal(err)
		}
		return out.QueueUrls
	}
	for _, c := range []nsClients{def, eu, other} {
		if _, err := c.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("extra")}); err != nil {
			t.Fatal(err)
		}
	}
	// Deleting a declared queue of the eu account: only its reset makes it again.
	dlq, err := eu.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("billing-dlq")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eu.sqs.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: dlq.QueueUrl}); err != nil {
		t.Fatal(err)
	}
	if err := s.ResetAccount("222222222222"); err != nil {
		t.Fatal(err)
	}
	if got := names(other); len(got) != 1 || got[0] != "http://"+s.Addr()+"/222222222222/orders" {
		t.Fatalf("222222222222 after its reset: %v", got)
	}
	if got := names(eu); len(got) != 2 { // billing and extra: billing-dlq stays deleted
		t.Fatalf("111111111111 after another account's reset: %v", got)
	}
	if err := s.ResetAccount("000000000000"); err != nil {
		t.Fatal(err)
	}
	if got := names(def); len(got) != 1 || got[0] != "http://"+s.Addr()+"/000000000000/orders" {
		t.Fatalf("the default account after its reset: %v", got)
	}
	if err := s.ResetAccount("111111111111"); err != nil {
		t.Fatal(err)
	}
	if got := names(eu); len(got) != 2 { // billing and billing-dlq, made again
		t.Fatalf("111111111111 after its reset: %v", got)
	}
}
