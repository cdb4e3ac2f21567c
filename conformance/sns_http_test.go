package conformance

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// HTTP/S subscriptions with a subscriber the spec runs on 127.0.0.1
// (label loopback: skipped on AWS, which cannot reach it). Evidence: the
// SNS developer guide's sns-http-https-endpoint-as-subscriber.html
// (confirmation, headers), sns-message-and-json-formats.html (the three
// message types and their fields), sns-verify-signature-of-message.html
// (string to sign, SignatureVersion 1 = SHA1withRSA, 2 = SHA256withRSA),
// and AWS's recorded HTTP requests (localstack test_sns.snapshot.json,
// test_subscribe_external_http_endpoint_content_type, spec sns.md §7.4).

// hookRequest is one request the subscriber received.
type hookRequest struct {
	Header http.Header
	Body   string
}

func (r hookRequest) json() map[string]any {
	GinkgoHelper()
	var m map[string]any
	Expect(json.Unmarshal([]byte(r.Body), &m)).To(Succeed(), r.Body)
	return m
}

// subscriber is a loopback HTTP endpoint that answers 200 and keeps every
// request.
type subscriber struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []hookRequest
}

func newSubscriber() *subscriber {
	s := &subscriber{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, hookRequest{Header: r.Header.Clone(), Body: string(b)})
		s.mu.Unlock()
	}))
	DeferCleanup(s.Close)
	return s
}

// await returns the first request of the given x-amz-sns-message-type
// whose body contains substr.
func (s *subscriber) await(ctx context.Context, msgType, substr string) hookRequest {
	GinkgoHelper()
	var got hookRequest
	Eventually(func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, r := range s.reqs {
			if r.Header.Get("x-amz-sns-message-type") == msgType && strings.Contains(r.Body, substr) {
				got = r
				return true
			}
		}
		return false
	}).WithContext(ctx).Should(BeTrue(), "no %s request containing %q", msgType, substr)
	return got
}

// httpSubscription subscribes s to topic over http, confirms it with the
// token it was sent, and returns the subscription ARN.
func httpSubscription(ctx context.Context, topic string, s *subscriber, attrs map[string]string) string {
	GinkgoHelper()
	_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String(s.URL), Attributes: attrs})
	Expect(err).NotTo(HaveOccurred())
	conf := s.await(ctx, "SubscriptionConfirmation", topic).json()
	out, err := snsc(ctx).ConfirmSubscription(ctx, &sns.ConfirmSubscriptionInput{TopicArn: aws.String(topic), Token: aws.String(conf["Token"].(string))})
	Expect(err).NotTo(HaveOccurred())
	return aws.ToString(out.SubscriptionArn)
}

// verifySignature checks an SNS message's Signature against the
// certificate at its SigningCertURL, as the developer guide describes.
func verifySignature(ctx context.Context, m map[string]any) {
	GinkgoHelper()
	var keys []string
	switch m["Type"] {
	case "Notification":
		keys = []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"}
	default:
		keys = []string{"Message", "MessageId", "SubscribeURL", "Timestamp", "Token", "TopicArn", "Type"}
	}
	var sb strings.Builder
	for _, k := range keys {
		if v, ok := m[k].(string); ok {
			sb.WriteString(k + "\n" + v + "\n")
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m["SigningCertURL"].(string), nil)
	Expect(err).NotTo(HaveOccurred())
	resp, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer resp.Body.Close()
	pemBytes, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	block, _ := pem.Decode(pemBytes)
	Expect(block).NotTo(BeNil(), "SigningCertURL did not serve a PEM certificate: %q", pemBytes)
	cert, err := x509.ParseCertificate(block.Bytes)
	Expect(err).NotTo(HaveOccurred())
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	Expect(ok).To(BeTrue(), "the certificate's key is RSA")
	sig, err := base64.StdEncoding.DecodeString(m["Signature"].(string))
	Expect(err).NotTo(HaveOccurred())
	if m["SignatureVersion"] == "2" {
		sum := sha256.Sum256([]byte(sb.String()))
		Expect(rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig)).To(Succeed())
	} else {
		sum := sha1.Sum([]byte(sb.String()))
		Expect(rsa.VerifyPKCS1v15(pub, crypto.SHA1, sum[:], sig)).To(Succeed())
	}
}

var _ = Describe("SNS delivery to HTTP endpoints", Label("sns-http", loopback), func() {
	It("answers Subscribe with pending confirmation and lists the subscription as PendingConfirmation", func(ctx SpecContext) {
		// API_Subscribe: without ReturnSubscriptionArn an unconfirmed
		// subscription answers "pending confirmation".
		s := newSubscriber()
		topic := createTopic(ctx, "http-pending", nil)
		out, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String(s.URL)})
		Expect(err).NotTo(HaveOccurred())
		Expect(aws.ToString(out.SubscriptionArn)).To(Equal("pending confirmation"))
		Eventually(func(g Gomega) {
			l, err := snsc(ctx).ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(l.Subscriptions).To(HaveLen(1))
			g.Expect(aws.ToString(l.Subscriptions[0].SubscriptionArn)).To(Equal("PendingConfirmation"))
		}).WithContext(ctx).Should(Succeed())
	})

	It("sends a signed SubscriptionConfirmation with a token and a SubscribeURL", func(ctx SpecContext) {
		s := newSubscriber()
		topic := createTopic(ctx, "http-confirm", nil)
		_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String(s.URL)})
		Expect(err).NotTo(HaveOccurred())
		r := s.await(ctx, "SubscriptionConfirmation", topic)
		Expect(r.Header.Get("x-amz-sns-topic-arn")).To(Equal(topic))
		Expect(r.Header.Get("x-amz-sns-message-id")).NotTo(BeEmpty())
		m := r.json()
		Expect(m).To(HaveKeyWithValue("Type", "SubscriptionConfirmation"))
		Expect(m).To(HaveKeyWithValue("TopicArn", topic))
		Expect(m["Token"]).NotTo(BeEmpty())
		Expect(m["Message"]).To(Equal("You have chosen to subscribe to the topic " + topic + ".\nTo confirm the subscription, visit the SubscribeURL included in this message."))
		Expect(m["SubscribeURL"]).To(ContainSubstring("Action=ConfirmSubscription"))
		Expect(m["MessageId"]).To(Equal(r.Header.Get("x-amz-sns-message-id")))
		verifySignature(ctx, m)
	})

	It("confirms a subscription when its SubscribeURL is visited", func(ctx SpecContext) {
		// sns-http-https-endpoint-as-subscriber.html, step 2: visit the URL.
		s := newSubscriber()
		topic := createTopic(ctx, "http-visit", nil)
		_, err := snsc(ctx).Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("http"), Endpoint: aws.String(s.URL)})
		Expect(err).NotTo(HaveOccurred())
		m := s.await(ctx, "SubscriptionConfirmation", topic).json()
		resp, err := http.Get(m["SubscribeURL"].(string))
		Expect(err).NotTo(HaveOccurred())
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
		Expect(string(body)).To(ContainSubstring("<ConfirmSubscriptionResponse"))
		Expect(string(body)).To(ContainSubstring(topic + ":"))
		Eventually(func(g Gomega) {
			l, err := snsc(ctx).ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(l.Subscriptions).To(HaveLen(1))
			g.Expect(aws.ToString(l.Subscriptions[0].SubscriptionArn)).To(HavePrefix(topic + ":"))
		}).WithContext(ctx).Should(Succeed())
	})

	It("reports a subscription confirmed with ConfirmSubscription as no longer pending", func(ctx SpecContext) {
		// API_ConfirmSubscription answers the subscription's ARN. Whether
		// ConfirmationWasAuthenticated is then true for a signed call is
		// not documented, so it is not checked.
		s := newSubscriber()
		topic := createTopic(ctx, "http-attrs", nil)
		sub := httpSubscription(ctx, topic, s, nil)
		Expect(sub).To(HavePrefix(topic + ":"))
		Eventually(func() map[string]string { return subscriptionAttributes(ctx, sub) }).WithContext(ctx).Should(And(
			HaveKeyWithValue("PendingConfirmation", "false"),
			HaveKeyWithValue("Protocol", "http"),
			HaveKeyWithValue("Endpoint", s.URL),
		))
	})

	It("delivers a signed Notification with AWS's headers (SignatureVersion 1)", func(ctx SpecContext) {
		s := newSubscriber()
		topic := createTopic(ctx, "http-notify", nil)
		sub := httpSubscription(ctx, topic, s, nil)
		out, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("over http"), Subject: aws.String("Hi")})
		Expect(err).NotTo(HaveOccurred())
		r := s.await(ctx, "Notification", "over http")
		Expect(r.Header.Get("x-amz-sns-subscription-arn")).To(Equal(sub))
		Expect(r.Header.Get("x-amz-sns-topic-arn")).To(Equal(topic))
		Expect(r.Header.Get("x-amz-sns-message-id")).To(Equal(aws.ToString(out.MessageId)))
		Expect(r.Header.Get("Content-Type")).To(Equal("text/plain; charset=UTF-8"))
		Expect(r.Header.Get("User-Agent")).To(Equal("Amazon Simple Notification Service Agent"))
		m := r.json()
		Expect(m).To(HaveKeyWithValue("Type", "Notification"))
		Expect(m).To(HaveKeyWithValue("Subject", "Hi"))
		Expect(m).To(HaveKeyWithValue("SignatureVersion", "1"))
		Expect(m["UnsubscribeURL"]).To(ContainSubstring("Action=Unsubscribe&SubscriptionArn=" + sub))
		verifySignature(ctx, m)
	})

	It("signs with SHA256 when the topic's SignatureVersion is 2", func(ctx SpecContext) {
		// sns-verify-signature-of-message.html: SignatureVersion 2 uses SHA256.
		s := newSubscriber()
		topic := createTopic(ctx, "http-v2", map[string]string{"SignatureVersion": "2"})
		httpSubscription(ctx, topic, s, nil)
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("sha256 please")})).To(Succeed())
		m := s.await(ctx, "Notification", "sha256 please").json()
		Expect(m).To(HaveKeyWithValue("SignatureVersion", "2"))
		verifySignature(ctx, m)
	})

	It("delivers the raw message with x-amz-sns-rawdelivery when RawMessageDelivery is true", Label("sns-raw"), func(ctx SpecContext) {
		// sns-large-payload-raw-message-delivery.html; recorded headers.
		s := newSubscriber()
		topic := createTopic(ctx, "http-raw", nil)
		httpSubscription(ctx, topic, s, map[string]string{"RawMessageDelivery": "true"})
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("just the text")})).To(Succeed())
		r := s.await(ctx, "Notification", "just the text")
		Expect(r.Body).To(Equal("just the text"))
		Expect(r.Header.Get("x-amz-sns-rawdelivery")).To(Equal("true"))
	})

	It("delivers the http entry of a MessageStructure json message", func(ctx SpecContext) {
		// API_Publish: the endpoint's protocol key overrides default.
		s := newSubscriber()
		topic := createTopic(ctx, "http-ms", nil)
		httpSubscription(ctx, topic, s, nil)
		Expect(publishErr(ctx, &sns.PublishInput{TopicArn: aws.String(topic), MessageStructure: aws.String("json"),
			Message: aws.String(`{"default":"for all","http":"for hooks"}`)})).To(Succeed())
		Expect(s.await(ctx, "Notification", "for hooks").json()).To(HaveKeyWithValue("Message", "for hooks"))
	})

	It("sends an UnsubscribeConfirmation when the subscription is deleted", func(ctx SpecContext) {
		// sns-message-and-json-formats.html: UnsubscribeConfirmation.
		s := newSubscriber()
		topic := createTopic(ctx, "http-unsub", nil)
		sub := httpSubscription(ctx, topic, s, nil)
		_, err := snsc(ctx).Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(sub)})
		Expect(err).NotTo(HaveOccurred())
		m := s.await(ctx, "UnsubscribeConfirmation", topic).json()
		Expect(m).To(HaveKeyWithValue("Type", "UnsubscribeConfirmation"))
		Expect(m["Token"]).NotTo(BeEmpty())
		Expect(m["SubscribeURL"]).To(ContainSubstring("Action=ConfirmSubscription"))
		verifySignature(ctx, m)
	})

	It("uses the Content-Type of the subscription's requestPolicy", Label("sns-delivery-policy"), func(ctx SpecContext) {
		// sns-message-delivery-retries.html: requestPolicy.headerContentType.
		s := newSubscriber()
		topic := createTopic(ctx, "http-ctype", nil)
		sub := httpSubscription(ctx, topic, s, nil)
		_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
			AttributeName: aws.String("DeliveryPolicy"), AttributeValue: aws.String(`{"requestPolicy":{"headerContentType":"application/json"}}`)})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			_, err := snsc(ctx).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("typed")})
			g.Expect(err).NotTo(HaveOccurred())
			s.mu.Lock()
			defer s.mu.Unlock()
			last := s.reqs[len(s.reqs)-1]
			g.Expect(last.Header.Get("Content-Type")).To(Equal("application/json"))
		}).WithContext(ctx).Should(Succeed())
	})

	It("returns a subscription DeliveryPolicy normalised and its EffectiveDeliveryPolicy", Label("sns-delivery-policy"), func(ctx SpecContext) {
		// Recorded: test_subscribe_external_http_endpoint_content_type:
		// missing keys come back as null, guaranteed false; the effective
		// policy fills the HTTP defaults (20/20/3, linear).
		s := newSubscriber()
		topic := createTopic(ctx, "http-dp", nil)
		sub := httpSubscription(ctx, topic, s, nil)
		_, err := snsc(ctx).SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
			AttributeName: aws.String("DeliveryPolicy"), AttributeValue: aws.String(`{"requestPolicy":{"headerContentType":"text/csv"}}`)})
		Expect(err).NotTo(HaveOccurred())
		var attrs map[string]string
		Eventually(func(g Gomega) {
			attrs = subscriptionAttributes(ctx, sub)
			g.Expect(attrs).To(HaveKey("DeliveryPolicy"))
		}).WithContext(ctx).Should(Succeed())
		Expect(attrs["DeliveryPolicy"]).To(MatchJSON(`{"healthyRetryPolicy":null,"sicklyRetryPolicy":null,"throttlePolicy":null,"requestPolicy":{"headerContentType":"text/csv"},"guaranteed":false}`))
		var eff struct {
			HealthyRetryPolicy map[string]any `json:"healthyRetryPolicy"`
			RequestPolicy      map[string]any `json:"requestPolicy"`
		}
		Expect(json.Unmarshal([]byte(attrs["EffectiveDeliveryPolicy"]), &eff)).To(Succeed())
		Expect(eff.HealthyRetryPolicy).To(HaveKeyWithValue("minDelayTarget", BeNumerically("==", 20)))
		Expect(eff.HealthyRetryPolicy).To(HaveKeyWithValue("maxDelayTarget", BeNumerically("==", 20)))
		Expect(eff.HealthyRetryPolicy).To(HaveKeyWithValue("numRetries", BeNumerically("==", 3)))
		Expect(eff.HealthyRetryPolicy).To(HaveKeyWithValue("backoffFunction", "linear"))
		Expect(eff.RequestPolicy).To(HaveKeyWithValue("headerContentType", "text/csv"))
	})
})

var _ = Describe("SNS delivery policies", Label("sns-delivery-policy"), func() {
	It("reports AWS's default EffectiveDeliveryPolicy for a new topic", func(ctx SpecContext) {
		// Recorded default (test_topic_delivery_policy_crud) and the
		// defaults table of sns-message-delivery-retries.html.
		topic := createTopic(ctx, "dp-default", nil)
		Expect(topicAttributes(ctx, topic)["EffectiveDeliveryPolicy"]).To(MatchJSON(`{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}`))
		Expect(topicAttributes(ctx, topic)).NotTo(HaveKey("DeliveryPolicy"))
	})

	It("stores a topic DeliveryPolicy and merges it into the effective one", func(ctx SpecContext) {
		// Recorded: test_topic_delivery_policy_crud.
		topic := createTopic(ctx, "dp-set", nil)
		_, err := snsc(ctx).SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{TopicArn: aws.String(topic), AttributeName: aws.String("DeliveryPolicy"),
			AttributeValue: aws.String(`{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":5,"maxDelayTarget":6,"numRetries":1}}}`)})
		Expect(err).NotTo(HaveOccurred())
		var attrs map[string]string
		Eventually(func(g Gomega) {
			attrs = topicAttributes(ctx, topic)
			g.Expect(attrs).To(HaveKey("DeliveryPolicy"))
		}).WithContext(ctx).Should(Succeed())
		var eff struct {
			HTTP struct {
				DefaultHealthyRetryPolicy map[string]any `json:"defaultHealthyRetryPolicy"`
			} `json:"http"`
		}
		Expect(json.Unmarshal([]byte(attrs["EffectiveDeliveryPolicy"]), &eff)).To(Succeed())
		Expect(eff.HTTP.DefaultHealthyRetryPolicy).To(HaveKeyWithValue("minDelayTarget", BeNumerically("==", 5)))
		Expect(eff.HTTP.DefaultHealthyRetryPolicy).To(HaveKeyWithValue("maxDelayTarget", BeNumerically("==", 6)))
		Expect(eff.HTTP.DefaultHealthyRetryPolicy).To(HaveKeyWithValue("numRetries", BeNumerically("==", 1)))
	})

	It("refuses a DeliveryPolicy whose minDelayTarget is below 1", Label("errors"), func(ctx SpecContext) {
		// AWS's answer quoted in awsdocs/amazon-sns-developer-guide#5:
		// "... DeliveryPolicy: healthyRetryPolicy.minDelayTarget must be
		// greater than or equal to 1".
		topic := createTopic(ctx, "dp-bad", nil)
		_, err := snsc(ctx).SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{TopicArn: aws.String(topic), AttributeName: aws.String("DeliveryPolicy"),
			AttributeValue: aws.String(`{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":0,"maxDelayTarget":0,"numRetries":0}}}`)})
		Expect(err).To(HaveErrorCode("InvalidParameter"))
		Expect(httpStatus(err)).To(Equal(http.StatusBadRequest))
		Expect(errorMessage(err)).To(ContainSubstring("DeliveryPolicy"))
		Expect(errorMessage(err)).To(ContainSubstring("minDelayTarget must be greater than or equal to 1"))
	})
})
