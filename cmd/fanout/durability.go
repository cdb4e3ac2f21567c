package main

import (
	"flag"
	"time"

	"github.com/fanout/fanout"
)

// durabilityConfig is the flags of the data dir (issue 14).
type durabilityConfig struct {
	dataDir  string
	mode     string
	interval time.Duration
}

func (c *durabilityConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.dataDir, "data-dir", "", "keep state in `DIR` and restore it at the next start (default: memory only)")
	fs.StringVar(&c.mode, "durability", "strict", "with --data-dir: strict (a 2xx reply means the change is on disk) or relaxed (fsync every --sync-interval; a crash may lose that window)")
	fs.DurationVar(&c.interval, "sync-interval", 100*time.Millisecond, "with --durability relaxed: the longest an acknowledged change waits for its fsync")
}

func (c *durabilityConfig) apply(fs *flag.FlagSet, o *fanout.Options) error {
	d, err := fanout.ParseDurability(c.mode)
	if err != nil {
		return usagef("--durability %q: use strict or relaxed", c.mode)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.dataDir == "" && (set["durability"] || set["sync-interval"]) {
		return usagef("--durability and --sync-interval need --data-dir: without it nothing is written to disk")
	}
	if set["sync-interval"] && d != fanout.RelaxedDurability {
		return usagef("--sync-interval is for --durability relaxed (strict syncs before every reply)")
	}
	if c.interval <= 0 {
		return usagef("--sync-interval %v: use a positive duration, e.g. 100ms", c.interval)
	}
	o.DataDir, o.Durability, o.SyncInterval = c.dataDir, d, c.interval
	return nil
}
