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
	Account     string `json:"account"`
	Region      string `json:"region"`
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

// queueViews lists the queues of the namespaces with their counts: by
// namespace, then in name order.
func (d Deps) queueViews(spaces []Space) []queueView {
	out := []queueView{}
	for _, ns := range spaces {
		out = append(out, d.namespaceQueues(ns)...)
	}
	return out
}

// namespaceQueues lists one namespace's queues, in name order.
func (d Deps) namespaceQueues(ns Space) []queueView {
	out := []queueView{}
	names := ns.SQS.ListQueues("")
	sources := map[string][]string{} // DLQ name -> source names (a DLQ is of the same namespace)
	for _, name := range names {
		q, err := ns.SQS.Queue(name)
		if err != nil {
			continue // deleted meanwhile
		}
		v := queueView{Name: name, Arn: q.Arn(), Account: ns.Account, Region: ns.Region, Fifo: q.Fifo(), NoisyGroups: q.NoisyGroups(), DeadLettered: q.DeadLettered(), Tags: q.Tags(), Sources: []string{}}
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

// queues answers a page of the queues of every namespace (?account= and
// ?region= pick some), with their message counts and, for fair queues, how
// many message groups are noisy now: by namespace (the default first),
// then by name. ?limit (default and most 1000) and ?next, the queue ARN
// the previous page's "next" gave.
func (d Deps) queues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := intParam(q, "limit", maxQueuePage, maxQueuePage)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	spaces, ok := d.selected(w, r)
	if !ok {
		return
	}
	var views []queueView
	if after := q.Get("next"); after != "" {
		// Skip the namespaces before the token's, then the names before it.
		region, account, name := arnParts(after)
		for i, ns := range spaces {
			if ns.Account == account && ns.Region == region {
				views = d.namespaceQueues(ns) // DLQ sources need the namespace's every queue
				views = append(views[sort.Search(len(views), func(i int) bool { return views[i].Name >= name }):], d.queueViews(spaces[i+1:])...)
				break
			}
			// The token's namespace is gone (reset): go on with those after it
			// (past the default, they are in account, region order).
			if i > 0 && (ns.Account > account || ns.Account == account && ns.Region > region) {
				views = d.queueViews(spaces[i:])
				break
			}
		}
	} else {
		views = d.queueViews(spaces)
	}
	if views == nil {
		views = []queueView{}
	}
	page := map[string]any{}
	if len(views) > limit {
		page["next"] = views[limit].Arn
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
	Account       string             `json:"account"`
	Region        string             `json:"region"`
	Fifo          bool               `json:"fifo"`
	Published     int64              `json:"published"`
	Subscriptions []subscriptionView `json:"subscriptions"`
}

// graphView is everything the dashboard's overview draws: the topics and
// queues of the namespaces asked for, and every namespace for the page's
// selector.
type graphView struct {
	Clock      clockView       `json:"clock"`
	Topics     []topicView     `json:"topics"`
	Queues     []queueView     `json:"queues"`
	Namespaces []namespaceView `json:"namespaces"`
}

func (d Deps) topicViews(spaces []Space) []topicView {
	counts := map[string]delivery.SubscriptionCounts{}
	if d.Deliveries != nil {
		for _, c := range d.Deliveries.Stats().Subscriptions {
			counts[c.SubscriptionArn] = c
		}
	}
	out := []topicView{}
	for _, ns := range spaces {
		if ns.SNS != nil {
			out = append(out, namespaceTopics(ns, counts)...)
		}
	}
	return out
}

func namespaceTopics(ns Space, counts map[string]delivery.SubscriptionCounts) []topicView {
	var out []topicView
	for _, t := range ns.SNS.Summaries() {
		tv := topicView{Arn: t.Arn, Name: t.Name, Account: ns.Account, Region: ns.Region, Fifo: t.Fifo, Published: t.Published, Subscriptions: []subscriptionView{}}
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

// topics lists the topics of every namespace (?account= and ?region= pick
// some), each with its account, region and subscriptions with their counts.
func (d Deps) topics(w http.ResponseWriter, r *http.Request) {
	spaces, ok := d.selected(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"topics": d.topicViews(spaces)})
}

// graph answers the whole picture in one call, so the page polls one URL:
// every namespace, or those ?account= and ?region= pick.
func (d Deps) graph(w http.ResponseWriter, r *http.Request) {
	spaces, ok := d.selected(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, graphView{Clock: d.clockView(), Topics: d.topicViews(spaces), Queues: d.queueViews(spaces),
		Namespaces: d.namespaceViews(d.namespaces())})
}

// arnParts cuts an ARN's region, account and resource out ("" when it is
// not one).
func arnParts(arn string) (region, account, resource string) {
	p := strings.SplitN(arn, ":", 6)
	if len(p) != 6 {
		return "", "", ""
	}
	return p[3], p[4], p[5]
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
