package api_test

import (
	"crypto/md5"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/fanout/fanout"
)

// TestSDKBodyCharacters sends bodies whose one unusual character sits at
// every place around the decoder's word sizes, each alone and in a batch:
// a body the JSON decoder reads as plain ASCII skips the character check,
// so each other kind of text must still be checked, and stored as sent.
func TestSDKBodyCharacters(t *testing.T) {
	t.Parallel()
	c, _ := start(t, fanout.Options{})
	url := createQueue(t, c, "chars", nil)
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	valid := []string{"\"", "\\", "\t", "\n", "\r", "\x7f", "é", "\u2028", "\ufffd", "😀", "</", "\u00a0"}
	invalid := []string{"\x00", "\x01", "\x1f", "\ufffe", "\uffff"}
	for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 40} {
		for _, ch := range append(append([]string{}, valid...), invalid...) {
			body := letters[:n] + ch + letters[n:n+5]
			bad := false
			for _, x := range invalid {
				bad = bad || ch == x
			}
			_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &body})
			batch, berr := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
				{Id: aws.String("a"), MessageBody: aws.String(strings.Repeat("x", 20))},
				{Id: aws.String("b"), MessageBody: &body},
			}})
			if berr != nil {
				t.Fatalf("batch with %q at %d: %v", ch, n, berr)
			}
			if bad {
				apiErr(t, err, "InvalidMessageContents", "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF")
				if len(batch.Failed) != 1 || *batch.Failed[0].Id != "b" || *batch.Failed[0].Code != "InvalidMessageContents" {
					t.Fatalf("batch with %q at %d: %+v", ch, n, batch)
				}
				continue
			}
			if err != nil || len(batch.Successful) != 2 {
				t.Fatalf("%q at %d: send %v, batch %+v", ch, n, err, batch)
			}
			// The three messages sent: the body twice, and the batch's other.
			sum := md5.Sum([]byte(body))
			got := 0
			for got < 3 {
				out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10})
				if err != nil || len(out.Messages) == 0 {
					t.Fatalf("receive after %d: %v %v", got, out, err)
				}
				for _, m := range out.Messages {
					if *m.Body != body && *m.Body != strings.Repeat("x", 20) || *m.Body == body && *m.MD5OfBody != hex.EncodeToString(sum[:]) {
						t.Fatalf("%q at %d: received %q (%s)", ch, n, *m.Body, *m.MD5OfBody)
					}
					if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
						t.Fatal(err)
					}
					got++
				}
			}
		}
	}
}
