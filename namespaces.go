package fanout

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fanout/fanout/delivery"
	"github.com/fanout/fanout/internal/admin"
	"github.com/fanout/fanout/sns"
	snsapi "github.com/fanout/fanout/sns/api"
	"github.com/fanout/fanout/sqs"
	sqsapi "github.com/fanout/fanout/sqs/api"
	"github.com/fanout/fanout/topology"
)

// namespace is one account and region, as on AWS: its own queues, topics
// and subscriptions, served by its own engines. Every namespace shares the
// server's clock and delivery dispatcher.
type namespace struct {
	account, region string
	sqs             *sqs.Engine
	sns             *sns.Engine
	sqsAPI          *sqsapi.Handler
	snsAPI          *snsapi.Handler
}

type nsKey struct{ account, region string }

// namespaces is the registry of a server's namespaces. The default one
// (Options.Account, Options.Region) always exists; the others are made when
// a queue or topic is first created in them, so an account or region that
// is only read costs nothing.
type namespaces struct {
	def  *namespace
	make func(account, region string) *namespace
	mu   sync.RWMutex
	byNS map[nsKey]*namespace
	// others counts the namespaces besides the default: while there are
	// none, a lookup needs no lock.
	others atomic.Int64
}

func newNamespaces(def *namespace, make func(account, region string) *namespace) *namespaces {
	return &namespaces{def: def, make: make, byNS: map[nsKey]*namespace{{def.account, def.region}: def}}
}

// lookup returns the namespace of account and region, nil when nothing was
// ever created there.
func (n *namespaces) lookup(account, region string) *namespace {
	if account == n.def.account && region == n.def.region {
		return n.def
	}
	if n.others.Load() == 0 {
		return nil
	}
	n.mu.RLock()
	ns := n.byNS[nsKey{account, region}]
	n.mu.RUnlock()
	return ns
}

// hasAccount reports whether account has a namespace in any region.
func (n *namespaces) hasAccount(account string) bool {
	if account == n.def.account {
		return true
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	for k := range n.byNS {
		if k.account == account {
			return true
		}
	}
	return false
}

// get returns the namespace of account and region, making it if needed.
func (n *namespaces) get(account, region string) *namespace {
	if ns := n.lookup(account, region); ns != nil {
		return ns
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	k := nsKey{account, region}
	if ns := n.byNS[k]; ns != nil {
		return ns
	}
	ns := n.make(account, region)
	n.byNS[k] = ns
	n.others.Add(1)
	return ns
}

// view returns the namespace of account and region for a call that creates
// nothing: the registered one, or a fresh empty one that is not kept.
func (n *namespaces) view(account, region string) *namespace {
	if ns := n.lookup(account, region); ns != nil {
		return ns
	}
	return n.make(account, region)
}

// all returns every namespace, the default first, then by account and region.
func (n *namespaces) all() []*namespace {
	n.mu.RLock()
	out := make([]*namespace, 0, len(n.byNS))
	for _, ns := range n.byNS {
		if ns != n.def {
			out = append(out, ns)
		}
	}
	n.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].account != out[j].account {
			return out[i].account < out[j].account
		}
		return out[i].region < out[j].region
	})
	return append([]*namespace{n.def}, out...)
}

// dropOthers forgets every namespace but the default (after their engines
// are reset), so a reset server is as New left it.
func (n *namespaces) dropOthers() []*namespace {
	n.mu.Lock()
	defer n.mu.Unlock()
	var gone []*namespace
	for k, ns := range n.byNS {
		if ns != n.def {
			gone = append(gone, ns)
			delete(n.byNS, k)
		}
	}
	n.others.Store(0)
	return gone
}

// sqsEngine is the SQS engine of account and region, nil when none exists:
// what the SQS handlers need to follow a queue URL of another namespace.
func (n *namespaces) sqsEngine(account, region string) *sqs.Engine {
	if ns := n.lookup(account, region); ns != nil {
		return ns.sqs
	}
	return nil
}

// newNamespace builds the engines and handlers of one namespace.
func (s *Server) newNamespace(account, region string) *namespace {
	ns := &namespace{account: account, region: region}
	ns.sqs = sqs.New(sqs.Options{
		Clock: s.opts.Clock, Region: region, Account: account,
		NoRecreateWait: s.opts.NoRecreateWait, NoPurgeWait: s.opts.NoPurgeWait,
		Journal: s.sqsJournal(account, region),
	})
	ns.sns = sns.New(sns.Options{Clock: s.opts.Clock, Region: region, Account: account, Deliverer: s.deliveries,
		CheckEndpoint: s.checkEndpoint, Journal: s.snsJournal(account, region)})
	ns.sqsAPI = sqsapi.New(ns.sqs, s.opts.Logger).WithURLStyle(s.opts.QueueURLStyle).
		WithLookup(func(a, r string) *sqs.Engine { return s.ns.sqsEngine(a, r) })
	if s.opts.EnforcePolicies {
		ns.sqsAPI.WithAuthorizer(authorizeSQS)
	}
	ns.snsAPI = snsapi.New(ns.sns, s.opts.Logger).WithRoute(func(topicArn string) *snsapi.Handler {
		if region, account, _, ok := splitArn(topicArn, "sns"); ok {
			if o := s.ns.lookup(account, region); o != nil {
				return o.snsAPI
			}
		}
		return nil
	})
	return ns
}

// checkEndpoint vets a subscription's endpoint: the dispatcher's rules,
// and for an SQS queue of an account fanout serves, that its region has
// queues: an ARN built with the wrong region would otherwise only fail at
// delivery. A queue of an account fanout does not serve is accepted, as AWS
// accepts another account's queue it cannot see into; its deliveries fail
// and are recorded.
func (s *Server) checkEndpoint(protocol, endpoint string) error {
	if protocol == "sqs" {
		if region, account, _, ok := splitArn(endpoint, "sqs"); ok && s.ns.lookup(account, region) == nil && s.ns.hasAccount(account) {
			return fmt.Errorf("no queue exists in account %s, region %s (each account and region is its own namespace: create the queue there first, or check the ARN's region)", account, region)
		}
	}
	return s.deliveries.CheckEndpoint(protocol, endpoint)
}

// splitArn cuts arn:partition:service:region:account:resource apart.
// It runs on every SNS delivery to a queue, so it cuts without allocating.
func splitArn(arn, service string) (region, account, resource string, ok bool) {
	var parts [5]string
	rest := arn
	for i := range parts {
		if parts[i], rest, ok = strings.Cut(rest, ":"); !ok {
			return "", "", "", false
		}
	}
	if parts[0] != "arn" || parts[2] != service {
		return "", "", "", false
	}
	return parts[3], parts[4], rest, true
}

// queueRouter gives the delivery dispatcher the queues of every namespace:
// an SNS topic delivers to a queue of any account and region, as on AWS.
type queueRouter struct{ s *Server }

var _ delivery.Queues = queueRouter{}

func (q queueRouter) Queue(arn string) (delivery.Queue, error) {
	region, account, _, ok := splitArn(arn, "sqs")
	if !ok {
		return nil, errors.New("not an SQS queue ARN")
	}
	ns := q.s.ns.lookup(account, region)
	if ns == nil {
		return nil, sqs.QueueDoesNotExist()
	}
	return delivery.SQS(ns.sqs).Queue(arn)
}

// spaces lists every namespace for the admin API, the default first.
func (s *Server) spaces() []admin.Space {
	all := s.ns.all()
	out := make([]admin.Space, len(all))
	for i, ns := range all {
		out[i] = admin.Space{Account: ns.account, Region: ns.region, SQS: ns.sqs, SNS: ns.sns}
	}
	return out
}

// snsEngines lists the SNS engine of every namespace, the default first.
func (s *Server) snsEngines() []*sns.Engine {
	all := s.ns.all()
	out := make([]*sns.Engine, len(all))
	for i, ns := range all {
		out[i] = ns.sns
	}
	return out
}

// TopologyEngines are the server's engines as package topology applies a
// file to and exports one from: the default namespace, and through
// Namespace and Namespaces every other account and region.
func (s *Server) TopologyEngines() topology.Engines {
	return topology.Engines{SQS: s.sqs, SNS: s.sns,
		Namespace: func(account, region string, create bool) topology.Engines {
			ns := s.ns.view(account, region)
			if create {
				ns = s.ns.get(account, region)
			}
			return topology.Engines{SQS: ns.sqs, SNS: ns.sns}
		},
		Namespaces: func() []topology.Engines {
			all := s.ns.all()
			out := make([]topology.Engines, len(all))
			for i, ns := range all {
				out[i] = topology.Engines{SQS: ns.sqs, SNS: ns.sns}
			}
			return out
		},
	}
}
