package admin

import (
	"net/http"
	"sort"
	"time"

	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/sqs"
)

// dueItem is one thing waiting on the clock.
type dueItem struct {
	At   time.Time `json:"at"`
	In   string    `json:"in"`
	Kind string    `json:"kind"` // retry, delay-ends, visibility-ends
	// Queue (with its Account and Region) is set for messages; MessageID
	// and SubscriptionArn for retries.
	Queue           string `json:"queue,omitempty"`
	Account         string `json:"account,omitempty"`
	Region          string `json:"region,omitempty"`
	MessageID       string `json:"messageId,omitempty"`
	SubscriptionArn string `json:"subscriptionArn,omitempty"`
	Detail          string `json:"detail,omitempty"`
}

// due lists what falls due next, soonest first: SNS delivery retries, the
// ends of message delays and of visibility timeouts. ?limit=N (default 20,
// at most 1000). Each queue contributes at most limit messages per state,
// so the cost does not grow with queue depth.
func (d Deps) due(w http.ResponseWriter, r *http.Request) {
	limit, err := intParam(r.URL.Query(), "limit", 20, sqs.MaxPeekLimit)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	spaces, ok := d.selected(w, r)
	if !ok {
		return
	}
	f, _ := readFilter(r.URL.Query())
	now := d.Clock.Now()
	out := []dueItem{}
	if d.Deliveries != nil {
		for _, rec := range d.Deliveries.Records(delivery.Query{Status: delivery.StatusRetrying}) {
			if region, account, _ := arnParts(rec.SubscriptionArn); rec.NextAttempt != nil && f.keeps(Space{Account: account, Region: region}) {
				out = append(out, dueItem{At: *rec.NextAttempt, Kind: "retry", MessageID: rec.MessageID, SubscriptionArn: rec.SubscriptionArn,
					Detail: rec.Protocol + " " + rec.Endpoint})
			}
		}
	}
	kinds := map[sqs.MessageState]string{sqs.MessageDelayed: "delay-ends", sqs.MessageInflight: "visibility-ends"}
	for _, ns := range spaces {
		for _, name := range ns.SQS.ListQueues("") {
			for st, kind := range kinds {
				page, err := ns.SQS.Peek(name, sqs.PeekOptions{States: []sqs.MessageState{st}, Limit: max(limit, 1)})
				if err != nil {
					break // deleted meanwhile
				}
				for _, m := range page.Messages {
					out = append(out, dueItem{At: m.StateEnds, Kind: kind, Queue: name, Account: ns.Account, Region: ns.Region, MessageID: m.MessageID})
				}
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.Before(out[j].At)
		}
		return out[i].MessageID < out[j].MessageID // map order must not show
	})
	if len(out) > limit {
		out = out[:limit]
	}
	for i := range out {
		out[i].In = out[i].At.Sub(now).Round(time.Millisecond).String()
	}
	writeJSON(w, http.StatusOK, map[string]any{"now": now.UTC().Format(time.RFC3339Nano), "due": out})
}
