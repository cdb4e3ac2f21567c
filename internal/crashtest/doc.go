// Package crashtest holds the kill -9 test of fanout with a data dir
// (issue 14): its test builds the fanout binary, runs SQS clients (AWS JSON
// and Query, two namespaces, a standard queue, a FIFO queue over each
// protocol and a redrive queue with its dead-letter queue and move tasks;
// visibility changes over both protocols, over Query also with
// ChangeMessageVisibilityBatch, some of whose messages are left in flight
// and must stay so for their whole timeout on fanout's clock, across
// restarts and clock moves) and SNS clients (a standard topic with SQS and
// HTTP subscriptions, a FIFO topic to a FIFO queue, with Publish and
// PublishBatch, half of whose batches carry a second entry with an earlier
// entry's deduplication id: answered as published, never delivered, nor
// when the batch is retried after a kill cut its reply off, nor when it is
// published again after a restart within the deduplication window)
// against it, kills it with SIGKILL at random moments, some of them
// mid-compaction or during such a PublishBatch, restarts it on the same
// dir and checks what the clients were told against what fanout holds.
// Run the long loop with
// FANOUT_CRASH_CYCLES=200 go test -run KillNine -timeout 3h -v ./internal/crashtest/.
package crashtest
