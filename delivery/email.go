package delivery

import (
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"
)

// emailSender is the address SNS mails from.
const emailSender = "no-reply@sns.amazonaws.com"

// mail is one email as SNS would send it.
type mail struct {
	From, To, Subject, Body string
}

// emailEndpoint delivers email and email-json subscriptions: each message is
// recorded in the outbox and, when Options.SMTP names a server, sent to it.
// An SMTP 5xx answer is the address's fault (not retried); anything else
// that fails is retried on the customer-managed schedule.
// https://docs.aws.amazon.com/sns/latest/dg/sns-email-notifications.html
type emailEndpoint struct{}

func (emailEndpoint) remote(d *Dispatcher) bool { return d.opts.SMTP != "" }

func (emailEndpoint) attempt(d *Dispatcher, j *job) result {
	m, err := d.mailFor(j)
	if err != nil {
		return serverErr("%v", err)
	}
	if d.opts.SMTP != "" {
		if err := d.sendMail(m); err != nil {
			var te *textproto.Error
			if errors.As(err, &te) && te.Code >= 500 {
				return clientErr("SMTP %v", err)
			}
			return serverErr("SMTP %v", err)
		}
	}
	d.outbox.add(OutboxEntry{
		Time: d.clock.Now(), Protocol: j.sub.Protocol, Endpoint: j.sub.Endpoint, SubscriptionArn: j.sub.Arn,
		TopicArn: j.rec.TopicArn, MessageID: j.id(), Type: j.rec.Type, From: m.From, Subject: m.Subject, Body: m.Body,
	})
	return ok()
}

// mailFor composes the email for a job: for email, the message text with a
// footer holding the unsubscribe link, or a confirmation request holding the
// SubscribeURL; for email-json, the JSON document an HTTP endpoint would get.
func (d *Dispatcher) mailFor(j *job) (mail, error) {
	m := mail{To: j.sub.Endpoint}
	display := "AWS Notifications"
	if j.msg != nil {
		if j.msg.DisplayName != "" {
			display = j.msg.DisplayName
		}
		m.Subject = j.msg.Subject
		if m.Subject == "" {
			m.Subject = "AWS Notification Message"
		}
		if j.sub.Protocol == "email-json" {
			env, err := d.envelope(j.msg, j.sub)
			m.Body = env
			if err != nil {
				return m, err
			}
		} else {
			m.Body = j.msg.For(j.sub.Protocol) + "\n\n--\nTo stop receiving messages from this topic, visit this link to unsubscribe:\n" +
				d.opts.Links.UnsubscribeURL(j.sub.Arn) + "\n"
		}
	} else {
		if j.ctl.DisplayName != "" {
			display = j.ctl.DisplayName
		}
		m.Subject = "AWS Notification - Subscription Confirmation"
		if j.sub.Protocol == "email-json" {
			env, err := d.controlEnvelope(j.ctl)
			m.Body = env
			if err != nil {
				return m, err
			}
		} else {
			m.Body = "You have chosen to subscribe to the topic:\n" + j.ctl.TopicArn +
				"\n\nTo confirm this subscription, visit this link (if this was a mistake, do nothing):\n" +
				d.opts.Links.SubscribeURL(j.ctl.TopicArn, j.ctl.Token) + "\n"
		}
	}
	m.From = fmt.Sprintf("%q <%s>", display, emailSender)
	return m, nil
}

// message renders the mail as RFC 5322 text.
func (m mail) message(now time.Time) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\n", m.From, m.To, m.Subject, now.UTC().Format(time.RFC1123Z))
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(m.Body, "\r\n", "\n"), "\n", "\r\n"))
	return []byte(b.String())
}

// sendMail hands m to the SMTP server, within the timeout. No TLS and no
// authentication: the server is a local one for tests and development.
func (d *Dispatcher) sendMail(m mail) error {
	conn, err := (&net.Dialer{Timeout: d.opts.Timeout, Control: d.egress.control}).Dial("tcp", d.opts.SMTP)
	if err != nil {
		if re := (*refusedError)(nil); errors.As(err, &re) {
			return &textproto.Error{Code: 554, Msg: re.Error()} // refused for good, not retried
		}
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(d.opts.Timeout))
	host, _, _ := net.SplitHostPort(d.opts.SMTP)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Mail(emailSender); err != nil {
		return err
	}
	if err := c.Rcpt(m.To); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(m.message(d.clock.Now())); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// outboxEndpoint records what sms, application (mobile push) and firehose
// subscriptions would receive; fanout reaches no phone, push service or
// delivery stream, so these attempts always succeed.
type outboxEndpoint struct{}

func (outboxEndpoint) remote(*Dispatcher) bool { return false }

func (outboxEndpoint) attempt(d *Dispatcher, j *job) result {
	e := OutboxEntry{
		Time: d.clock.Now(), Protocol: j.sub.Protocol, Endpoint: j.sub.Endpoint, SubscriptionArn: j.sub.Arn,
		TopicArn: j.rec.TopicArn, MessageID: j.id(), Type: j.rec.Type,
	}
	switch {
	case j.msg == nil:
		e.Body = j.ctl.Text()
	case j.sub.Protocol == "firehose" && !j.sub.Raw:
		env, err := d.envelope(j.msg, j.sub)
		if err != nil {
			return serverErr("%v", err)
		}
		e.Body = env
	case j.sub.Protocol == "application":
		// MessageStructure=json may carry a payload per push platform
		// (APNS, GCM, ...), named in the endpoint ARN: .../endpoint/<platform>/<app>/<id>.
		e.Body = j.msg.For(platform(j.sub.Endpoint))
	default:
		e.Body = j.msg.For(j.sub.Protocol)
		if j.sub.Protocol == "sms" {
			e.From = j.msg.DisplayName
		}
	}
	d.outbox.add(e)
	return ok()
}

// platform returns the push platform of a platform endpoint ARN.
func platform(arn string) string {
	_, rest, found := strings.Cut(arn, ":endpoint/")
	if !found {
		return "application"
	}
	p, _, _ := strings.Cut(rest, "/")
	return p
}
