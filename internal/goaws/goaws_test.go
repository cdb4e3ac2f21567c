package goaws_test

import (
	"os"
	"strings"
	"testing"

	"github.com/fanout/fanout/internal/goaws"
	"github.com/fanout/fanout/topology"
)

// TestConvert converts a goaws file and checks the result as fanout's own
// format: it validates, and reads back as this file.
func TestConvert(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/goaws.yaml")
	if err != nil {
		t.Fatal(err)
	}
	top, notes, err := goaws.Convert(data, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 0 {
		t.Errorf("notes for Local: %v", notes)
	}
	if err := topology.Validate(top, topology.Options{}); err != nil {
		t.Fatalf("the conversion does not validate: %v", err)
	}
	y, err := top.YAML()
	if err != nil {
		t.Fatal(err)
	}
	want := `queues:
  audit:
    attributes:
      ReceiveMessageWaitTimeSeconds: 5
      VisibilityTimeout: 10
  billing:
    attributes:
      MaximumMessageSize: 65536
      ReceiveMessageWaitTimeSeconds: 5
      VisibilityTimeout: 120
  billing-dlq:
    attributes:
      ReceiveMessageWaitTimeSeconds: 5
      VisibilityTimeout: 10
  orders:
    attributes:
      ReceiveMessageWaitTimeSeconds: 5
      VisibilityTimeout: 10
  payments:
    attributes:
      ReceiveMessageWaitTimeSeconds: 5
      VisibilityTimeout: 10
    redrive:
      deadLetterQueue: billing-dlq
      maxReceiveCount: 4
topics:
  notifications: {}
  order-events:
    subscriptions:
      - queue: orders
      - queue: billing
        filterPolicy:
          event_type:
            - order_placed
            - order_refunded
        raw: true
      - queue: audit
        raw: true
`
	if string(y) != want {
		t.Errorf("converted:\n%s\nwant:\n%s", y, want)
	}
	back, err := topology.Parse(y, "converted.yaml")
	if err != nil {
		t.Fatalf("the output does not parse: %v", err)
	}
	if err := topology.Validate(back, topology.Options{}); err != nil {
		t.Fatal(err)
	}

	dev, notes, err := goaws.Convert(data, "Dev")
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 || !strings.Contains(notes[0], "--region eu-west-1") || !strings.Contains(notes[1], "--account 123456789012") {
		t.Errorf("notes for Dev: %v", notes)
	}
	if len(dev.Queues) != 1 || len(dev.Topics["dev-topic"].Subscriptions) != 1 {
		t.Errorf("Dev: %+v", dev)
	}
}

func TestConvertRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, file, env, want string }{
		{"not YAML", "Local: [", "", "not a goaws configuration"},
		{"empty", "", "", "no environment"},
		{"missing environment", "Local: {Queues: [{Name: a}]}\n", "Prod", `no environment "Prod" in the file (it has Local)`},
		{"bad redrive", "Local:\n  Queues:\n    - Name: a\n      RedrivePolicy: 'nope'\n", "", "queue a: RedrivePolicy: not JSON"},
		{"nameless queue", "Local:\n  Queues:\n    - VisibilityTimeout: 3\n", "", "a queue without a Name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := goaws.Convert([]byte(c.file), c.env)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want %q", err, c.want)
			}
		})
	}
}
