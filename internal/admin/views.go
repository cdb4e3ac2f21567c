package admin

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/sns"
	"github.com/fanout/fanout/sqs"
)

// queueView is a queue as GET /_fanout/sqs/queues and the dashboard show it.
type queueView struct {
	Name        string `json:"name"`
	Arn         string `json:"arn"`
	Fifo        bool   `json:"fifo"`
	Visible     int    `json:"visible"`
	InFlight    int    `json:"inFlight"`
	Delayed     int    `json:"delayed"`
	NoisyGroups int    `json:"noisyGroups"`
	// OldestAgeSeconds is the age of the oldest message in any state; 0
	// for an empty queue.
	OldestAgeSeconds float64 `json:"oldestAgeSeconds"`
	// DeadLetterQueue is the RedrivePolicy's target, by name, and
	// MaxReceiveCount its limit; Sources are the queues using this one as
	// their DLQ; DeadLettered counts messages this queue moved to its DLQ.
	DeadLetterQueue string            `json:"deadLetterQueue,omitempty"`
	MaxReceiveCount int               `json:"maxReceiveCount,omitempty"`
	Sources         []string          `json:"sources"`
	DeadLettered    int64             `json:"deadLettered"`
	Tags            map[string]string `json:"tags"`
}

// queueViews lists every queue with its counts, in name order.
func (d Deps) queueViews() []queueView {
	out := []queueView{}
	names := d.SQS.ListQueues("")
	sources := map[string][]string{} // DLQ name -> source names
	for _, name := range names {
		q, err := d.SQS.Queue(name)
		if err != nil {
			continue // deleted meanwhile
		}
		v := queueView{Name: name, Arn: q.Arn(), Fifo: q.Fifo(), NoisyGroups: q.NoisyGroups(), DeadLettered: q.DeadLettered(), Tags: q.Tags(), Sources: []string{}}
		attrs, _ := q.Attributes([]string{sqs.AttrApproximateNumberOfMessages, sqs.AttrApproximateNotVisible, sqs.AttrApproximateDelayed, sqs.AttrRedrivePolicy})
		for _, a := range attrs {
			n, _ := strconv.Atoi(a.Value)
			switch a.Name {
			case sqs.AttrApproximateNumberOfMessages:
				v.Visible = n
			case sqs.AttrApproximateNotVisible:
				v.InFlight = n
			case sqs.AttrApproximateDelayed:
				v.Delayed = n
			case sqs.AttrRedrivePolicy:
				var p struct {
					DeadLetterTargetArn string
					MaxReceiveCount     json.Number
				}
				if json.Unmarshal([]byte(a.Value), &p) == nil {
					v.DeadLetterQueue = arnName(p.DeadLetterTargetArn)
					mrc, _ := p.MaxReceiveCount.Int64()
					v.MaxReceiveCount = int(mrc)
					sources[v.DeadLetterQueue] = append(sources[v.DeadLetterQueue], name)
				}
			}
		}
		v.OldestAgeSeconds = d.oldestAge(q)
		out = append(out, v)
	}
	for i := range out {
		if s := sources[out[i].Name]; s != nil {
			out[i].Sources = s
		}
	}
	return out
}

// arnName is the last part of an ARN: a queue's or topic's name.
func arnName(arn string) string {
	return arn[strings.LastIndexByte(arn, ':')+1:]
}

// queues lists every queue with its message counts and, for fair queues,
// how many message groups are noisy now.
// queues answers a page of queueViews in name order: ?limit (default and
// most 1000) and ?next, the name the previous page's "next" gave.
func (d Deps) queues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(q, "limit", maxQueuePage, maxQueuePage)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	views := d.queueViews() // sorted by name; DLQ sources need every queue
	if after := q.Get("next"); after != "" {
		views = views[sort.Search(len(views), func(i int) bool { return views[i].Name >= after }):]
	}
	page := map[string]any{}
	if len(views) > limit {
		page["next"] = views[limit].Name
		views = views[:limit]
	}
	page["queues"] = views
	writeJSON(w, http.StatusOK, page)
}

// maxQueuePage bounds one reply of GET /_fanout/sqs/queues.
const maxQueuePage = 1000

// subscriptionView adds the dispatcher's outcome counts to a subscription.
type subscriptionView struct {
	sns.SubscriptionSummary
	Delivered    int64 `json:"delivered"`
	Failed       int64 `json:"failed"`
	DeadLettered int64 `json:"deadLettered"`
	Dropped      int64 `json:"dropped"`
	NotDelivered int64 `json:"notDelivered"`
	// Queue names the SQS queue of an sqs subscription (or of its DLQ).
	Queue           string `json:"queue,omitempty"`
	DeadLetterQueue string `json:"deadLetterQueue,omitempty"`
}

type topicView struct {
	Arn           string             `json:"arn"`
	Name          string             `json:"name"`
	Fifo          bool               `json:"fifo"`
	Published     int64              `json:"published"`
	Subscriptions []subscriptionView `json:"subscriptions"`
}

// graphView is everything the dashboard's overview draws.
type graphView struct {
	Clock  clockView   `json:"clock"`
	Topics []topicView `json:"topics"`
	Queues []queueView `json:"queues"`
}

func (d Deps) topicViews() []topicView {
	counts := map[string]delivery.SubscriptionCounts{}
	if d.Deliveries != nil {
		for _, c := range d.Deliveries.Stats().Subscriptions {
			counts[c.SubscriptionArn] = c
		}
	}
	out := []topicView{}
	if d.SNS == nil {
		return out
	}
	for _, t := range d.SNS.Summaries() {
		tv := topicView{Arn: t.Arn, Name: t.Name, Fifo: t.Fifo, Published: t.Published, Subscriptions: []subscriptionView{}}
		for _, s := range t.Subscriptions {
			c := counts[s.Arn]
			sv := subscriptionView{SubscriptionSummary: s, Delivered: c.Delivered, Failed: c.Failed, DeadLettered: c.DeadLettered, Dropped: c.Dropped, NotDelivered: c.NotDelivered}
			if s.Protocol == "sqs" {
				sv.Queue = arnName(s.Endpoint)
			}
			if s.DeadLetterArn != "" {
				sv.DeadLetterQueue = arnName(s.DeadLetterArn)
			}
			tv.Subscriptions = append(tv.Subscriptions, sv)
		}
		out = append(out, tv)
	}
	return out
}

// graph answers the whole picture in one call, so the page polls one URL.
func (d Deps) graph(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, graphView{Clock: d.clockView(), Topics: d.topicViews(), Queues: d.queueViews()})
}

// oldestAge is the age of the oldest of the first message in each state:
// the oldest visible message exactly (receives take them in send order),
// and for in-flight and delayed messages the next to become visible, so it
// costs three messages however long the queue is (AWS's
// ApproximateAgeOfOldestMessage is approximate too).
func (d Deps) oldestAge(q *sqs.Queue) float64 {
	now := d.Clock.Now()
	oldest := now
	for _, st := range []sqs.MessageState{sqs.MessageVisible, sqs.MessageInflight, sqs.MessageDelayed} {
		page, err := q.Peek(sqs.PeekOptions{States: []sqs.MessageState{st}, Limit: 1})
		if err == nil && len(page.Messages) == 1 && page.Messages[0].SentAt.Before(oldest) {
			oldest = page.Messages[0].SentAt
		}
	}
	return now.Sub(oldest).Seconds()
}
