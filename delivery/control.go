package delivery

import (
	"strings"
	"time"
)

// The Type of each message SNS sends.
const (
	TypeNotification             = "Notification"
	TypeSubscriptionConfirmation = "SubscriptionConfirmation"
	TypeUnsubscribeConfirmation  = "UnsubscribeConfirmation"
)

// Control is a message SNS sends about a subscription rather than for it:
// the SubscriptionConfirmation that Subscribe sends to HTTP/S and email
// endpoints, and the UnsubscribeConfirmation an HTTP/S endpoint gets when it
// is unsubscribed. Both carry a token and a SubscribeURL that confirms it.
// https://docs.aws.amazon.com/sns/latest/dg/http-subscription-confirmation-json.html
type Control struct {
	Type             string // TypeSubscriptionConfirmation or TypeUnsubscribeConfirmation
	ID               string
	TopicArn         string
	SubscriptionArn  string // the subscription being removed (UnsubscribeConfirmation)
	Token            string
	Timestamp        time.Time
	SignatureVersion string // the topic's: "1" or "2"
	DisplayName      string
}

// Text is the control message's Message member, in AWS's words.
func (c *Control) Text() string {
	if c.Type == TypeUnsubscribeConfirmation {
		return "You have chosen to deactivate subscription " + c.SubscriptionArn +
			".\nTo cancel this operation and restore the subscription, visit the SubscribeURL included in this message."
	}
	return "You have chosen to subscribe to the topic " + c.TopicArn +
		".\nTo confirm the subscription, visit the SubscribeURL included in this message."
}

// SubscribeURL returns the link that confirms token for topicArn, in AWS's
// query shape, served by fanout under PathPrefix.
func (l Links) SubscribeURL(topicArn, token string) string {
	return l.Base() + PathPrefix + "?Action=ConfirmSubscription&TopicArn=" + topicArn + "&Token=" + token
}

// ControlStringToSign builds the text SNS signs for a SubscriptionConfirmation
// or UnsubscribeConfirmation: Message, MessageId, SubscribeURL, Timestamp,
// Token, TopicArn and Type, each as "name\nvalue\n".
// https://docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html
func ControlStringToSign(typ, message, messageID, subscribeURL, timestamp, token, topicArn string) string {
	var b strings.Builder
	for _, kv := range [][2]string{
		{"Message", message}, {"MessageId", messageID}, {"SubscribeURL", subscribeURL},
		{"Timestamp", timestamp}, {"Token", token}, {"TopicArn", topicArn}, {"Type", typ},
	} {
		b.WriteString(kv[0])
		b.WriteByte('\n')
		b.WriteString(kv[1])
		b.WriteByte('\n')
	}
	return b.String()
}

// controlEnvelope renders a control message as HTTP/S and email-json
// endpoints receive it, signed.
func (d *Dispatcher) controlEnvelope(c *Control) (string, error) {
	text := c.Text()
	ts := c.Timestamp.UTC().Format(TimeFormat)
	subscribeURL := d.opts.Links.SubscribeURL(c.TopicArn, c.Token)
	version := c.SignatureVersion
	if version == "" {
		version = "1"
	}
	sig, err := d.opts.Signer.Sign(version, ControlStringToSign(c.Type, text, c.ID, subscribeURL, ts, c.Token, c.TopicArn))
	if err != nil {
		return "", err
	}
	cert, err := d.opts.Links.CertURL()
	if err != nil {
		return "", err
	}
	f := newFields(len(text))
	f.str("Type", c.Type)
	f.str("MessageId", c.ID)
	f.str("Token", c.Token)
	f.str("TopicArn", c.TopicArn)
	f.str("Message", text)
	f.str("SubscribeURL", subscribeURL)
	f.str("Timestamp", ts)
	f.str("SignatureVersion", version)
	f.str("Signature", sig)
	f.str("SigningCertURL", cert)
	return f.close(), nil
}
