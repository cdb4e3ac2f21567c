package topology

import (
	"strconv"

	"github.com/fanout/fanout/internal/id"
	sqsapi "github.com/fanout/fanout/sqs/api"
)

// section is one namespace of a file: its root (the server's default
// account and region) or one entry of Namespaces.
type section struct {
	opts Options
	t    *Topology // the section's queues and topics, with the source of its keys
	path string    // "namespaces[i]"; "" for the root
}

// sections splits a topology by namespace, the root first; a section's
// missing account or region is def's.
func (t *Topology) sections(def Options) []section {
	def = def.withDefaults()
	out := []section{{opts: def, t: &Topology{Queues: t.Queues, Topics: t.Topics, src: t.src}}}
	for i, ns := range t.Namespaces {
		o := Options{Account: ns.Account, Region: ns.Region}
		if o.Account == "" {
			o.Account = def.Account
		}
		if o.Region == "" {
			o.Region = def.Region
		}
		path := "namespaces[" + strconv.Itoa(i) + "]"
		out = append(out, section{opts: o, t: &Topology{Queues: ns.Queues, Topics: ns.Topics, src: t.src.within(path + ".")}, path: path})
	}
	return out
}

// checkSections reports a section's malformed account or region, and
// sections of one account and region (once the defaults are filled in,
// the root's included): each namespace has one.
func checkSections(secs []section, src *source) Errors {
	var errs Errors
	seen := map[Options]string{}
	for _, s := range secs[1:] {
		if !id.IsAccount(s.opts.Account) {
			errs = append(errs, src.errorAt(s.path+".account", strconv.Quote(s.opts.Account)+" is not an account id: 12 digits (quote it in YAML, or leading zeros are lost)"))
		}
		if !sqsapi.IsRegion(s.opts.Region) {
			errs = append(errs, src.errorAt(s.path+".region", strconv.Quote(s.opts.Region)+" is not a region name such as eu-west-1"))
		}
	}
	for _, s := range secs {
		if prev, dup := seen[s.opts]; dup {
			where := prev
			if where == "" {
				where = "the file's root queues and topics (the server's default account and region)"
			}
			errs = append(errs, src.errorAt(s.path, "account "+s.opts.Account+", region "+s.opts.Region+" is already "+where+": give each namespace one section"))
			continue
		}
		seen[s.opts] = s.path
	}
	return errs
}

// Select is the part of t in the namespaces keep picks: the root stands for
// def (the server's account and region), and a section's missing account or
// region is def's. Positions in the file are not kept.
func (t *Topology) Select(def Options, keep func(account, region string) bool) *Topology {
	secs := t.sections(def)
	out := &Topology{}
	if keep(secs[0].opts.Account, secs[0].opts.Region) {
		out.Queues, out.Topics = t.Queues, t.Topics
	}
	for i, ns := range t.Namespaces {
		if o := secs[i+1].opts; keep(o.Account, o.Region) {
			out.Namespaces = append(out.Namespaces, ns)
		}
	}
	return out
}
