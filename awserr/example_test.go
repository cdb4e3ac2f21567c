package awserr_test

import (
	"errors"
	"fmt"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/sqs"
)

// An engine's error is an *awserr.Error: its code, status and message are
// what a client of fanout's HTTP API would get.
func ExampleError() {
	engine := sqs.New(sqs.Options{})
	defer engine.Close()
	_, err := engine.Queue("missing")

	var ae *awserr.Error
	if errors.As(err, &ae) {
		fmt.Println(ae.Code, ae.StatusFor(false), ae.Message)
	}
	fmt.Println(errors.Is(err, sqs.ErrQueueDoesNotExist.New("")))
	// Output:
	// QueueDoesNotExist 400 The specified queue does not exist.
	// true
}
