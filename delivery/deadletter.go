package delivery

// deadLetter sends an undeliverable notification to the subscription's
// RedrivePolicy queue, as SNS does: the body is exactly what the endpoint
// would have received as SNS renders it (the raw text for raw subscriptions,
// else the JSON envelope, also for Lambda, email and the rest), a raw
// delivery keeps its message attributes as SQS attributes, and a FIFO
// message keeps its group and deduplication ids. SNS adds no attributes of
// its own.
// https://docs.aws.amazon.com/sns/latest/dg/sns-dead-letter-queues.html
func (d *Dispatcher) deadLetter(j *job) error {
	raw := j.sub.Raw && rawProtocols[j.sub.Protocol]
	return d.sendToQueue(j.sub.DeadLetterArn, nil, j.msg, raw, func() (string, error) {
		if raw {
			return j.msg.For(j.sub.Protocol), nil
		}
		return d.envelope(j.msg, j.sub)
	})
}

// rawProtocols can deliver raw messages.
var rawProtocols = map[string]bool{"sqs": true, "http": true, "https": true, "firehose": true}
