package main

import (
	"flag"

	"github.com/fanout/fanout"
)

// doorConfig is the front door's flags: who may call fanout, and how.
type doorConfig struct {
	allowUnsigned bool
}

func (d *doorConfig) flags(fs *flag.FlagSet) {
	fs.BoolVar(&d.allowUnsigned, "allow-unsigned", false, "accept Query calls without a SigV4 signature, and as GETs: what any web page can make a browser send")
}

// apply sets the front door's options.
func (d *doorConfig) apply(o *fanout.Options) error {
	o.AllowUnsigned = d.allowUnsigned
	return nil
}
