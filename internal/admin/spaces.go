package admin

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/fanout/fanout/internal/id"
	"github.com/fanout/fanout/sns"
	"github.com/fanout/fanout/sqs"
	sqsapi "github.com/fanout/fanout/sqs/api"
)

// Space is one namespace: an account and region with its engines, as Deps.Spaces
// lists them.
type Space struct {
	Account, Region string
	SQS             *sqs.Engine
	SNS             *sns.Engine
}

// namespaces is every namespace, the default first.
func (d Deps) namespaces() []Space {
	if d.Spaces != nil {
		return d.Spaces()
	}
	return []Space{{Account: d.SQS.Account(), Region: d.SQS.Region(), SQS: d.SQS, SNS: d.SNS}}
}

// nsFilter is ?account= and ?region=, each optional: the namespaces a
// listing covers (all by default), as POST /_fanout/reset?account= picks.
type nsFilter struct{ account, region string }

func readFilter(q url.Values) (nsFilter, error) {
	f := nsFilter{account: q.Get("account"), region: q.Get("region")}
	if f.account != "" && !id.IsAccount(f.account) {
		return f, fmt.Errorf("account: %q is not an account id (12 digits)", f.account)
	}
	if f.region != "" && !sqsapi.IsRegion(f.region) {
		return f, fmt.Errorf("region: %q is not a region name such as us-east-1", f.region)
	}
	return f, nil
}

func (f nsFilter) any() bool { return f.account != "" || f.region != "" }

func (f nsFilter) keeps(ns Space) bool {
	return (f.account == "" || f.account == ns.Account) && (f.region == "" || f.region == ns.Region)
}

// selected is the namespaces the request's filter keeps, or a 400 answered.
func (d Deps) selected(w http.ResponseWriter, r *http.Request) ([]Space, bool) {
	f, err := readFilter(r.URL.Query())
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return nil, false
	}
	return d.pick(f), true
}

func (d Deps) pick(f nsFilter) []Space {
	var out []Space
	for _, ns := range d.namespaces() {
		if f.keeps(ns) {
			out = append(out, ns)
		}
	}
	return out
}

// find is the namespace of a queue or topic named on a path: with no
// filter, the default namespace when it has one by that name, else the one
// namespace that has; with ?account= and/or ?region=, the one they pick
// that has. has reports whether a namespace holds the name. Several
// matches are a 400 naming them; none, found is false.
func (d Deps) find(q url.Values, kind, name string, has func(Space) bool) (ns Space, found bool, err error) {
	f, err := readFilter(q)
	if err != nil {
		return ns, false, badRequest{err.Error()}
	}
	var hits []Space
	for i, n := range d.pick(f) {
		if !has(n) {
			continue
		}
		if i == 0 && !f.any() {
			return n, true, nil // the default namespace (first) has it
		}
		hits = append(hits, n)
	}
	switch len(hits) {
	case 0:
		return ns, false, nil
	case 1:
		return hits[0], true, nil
	}
	where := make([]string, len(hits))
	for i, h := range hits {
		where[i] = h.Account + "/" + h.Region
	}
	return ns, false, badf("%s %s exists in %d namespaces (%s): pick one with ?account= and ?region=", kind, name, len(hits), strings.Join(where, ", "))
}

// queueOf is the queue a path names (see find), or the AWS error for a
// queue that does not exist.
func (d Deps) queueOf(q url.Values, name string) (*sqs.Queue, Space, error) {
	ns, ok, err := d.find(q, "queue", name, func(n Space) bool { _, err := n.SQS.Queue(name); return err == nil })
	if err != nil {
		return nil, ns, err
	}
	if !ok {
		return nil, ns, sqs.QueueDoesNotExist()
	}
	queue, err := ns.SQS.Queue(name)
	return queue, ns, err
}

// topicOf is the namespace of the topic a path names (see find).
func (d Deps) topicOf(q url.Values, name string) (Space, error) {
	ns, ok, err := d.find(q, "topic", name, func(n Space) bool {
		if n.SNS == nil {
			return false
		}
		_, err := n.SNS.TopicAttributes(n.SNS.TopicArn(name))
		return err == nil
	})
	if err != nil {
		return ns, err
	}
	if !ok {
		return ns, sns.ErrNotFound.New("Topic does not exist")
	}
	return ns, nil
}

// engineOf is the namespace of account and region, when it exists.
func (d Deps) engineOf(account, region string) (Space, bool) {
	for _, ns := range d.namespaces() {
		if ns.Account == account && ns.Region == region {
			return ns, true
		}
	}
	return Space{}, false
}

// namespaceView is one namespace as GET /_fanout/namespaces lists it.
type namespaceView struct {
	Account       string `json:"account"`
	Region        string `json:"region"`
	Default       bool   `json:"default"`
	Queues        int    `json:"queues"`
	Topics        int    `json:"topics"`
	Subscriptions int    `json:"subscriptions"`
}

func (d Deps) namespaceViews(list []Space) []namespaceView {
	all := d.namespaces()
	out := make([]namespaceView, 0, len(list))
	for _, ns := range list {
		v := namespaceView{Account: ns.Account, Region: ns.Region, Default: ns.Account == all[0].Account && ns.Region == all[0].Region,
			Queues: len(ns.SQS.ListQueues(""))}
		if ns.SNS != nil {
			for _, t := range ns.SNS.Summaries() {
				v.Topics++
				v.Subscriptions += len(t.Subscriptions)
			}
		}
		out = append(out, v)
	}
	return out
}

// serveNamespaces lists the namespaces (?account=, ?region= filter them)
// with their number of queues, topics and subscriptions.
func (d Deps) serveNamespaces(w http.ResponseWriter, r *http.Request) {
	list, ok := d.selected(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"namespaces": d.namespaceViews(list)})
}
