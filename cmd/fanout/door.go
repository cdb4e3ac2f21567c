package main

import (
	"flag"
	"strings"

	"github.com/fanout/fanout"
)

// doorConfig is the front door's flags: who may call fanout, and how.
type doorConfig struct {
	allowUnsigned bool
	allowedHosts  string
}

func (d *doorConfig) flags(fs *flag.FlagSet) {
	fs.BoolVar(&d.allowUnsigned, "allow-unsigned", false, "accept Query calls without a SigV4 signature, and as GETs: what any web page can make a browser send")
	fs.StringVar(&d.allowedHosts, "allowed-hosts", "", "comma-separated host names fanout answers to besides localhost and IP addresses (name, *.example.com, or * for any); others are refused against DNS rebinding")
}

// apply sets the front door's options.
func (d *doorConfig) apply(o *fanout.Options) error {
	o.AllowUnsigned = d.allowUnsigned
	o.AllowedHosts = splitList(d.allowedHosts)
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
