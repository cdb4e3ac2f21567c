package main

import (
	"errors"
	"flag"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/delivery"
)

// lambdaFlag collects --lambda NAME=URL values.
type lambdaFlag map[string]string

func (l lambdaFlag) String() string {
	var parts []string
	for k, v := range l {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Set adds NAME=URL, or comma-separated pairs as FANOUT_LAMBDA holds them.
func (l lambdaFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		name, url, found := strings.Cut(v, "=")
		if !found || name == "" || url == "" {
			return fmt.Errorf("%q is not NAME=URL", v)
		}
		l[name] = url
	}
	return nil
}

// deliveryConfig is the flags of SNS delivery's bounds and egress.
type deliveryConfig struct {
	recordBytes byteSize
	backlog     int
	allow       string
}

func (c *deliveryConfig) flags(fs *flag.FlagSet) {
	c.recordBytes = delivery.DefaultRecordBytes
	fs.Var(&c.recordBytes, "record-bytes", "byte budget of the message bodies /_fanout/deliveries and /_fanout/sns/outbox keep, e.g. 64MiB; the oldest go first")
	fs.IntVar(&c.backlog, "delivery-backlog", delivery.DefaultBacklog, "most pending HTTP/S, Lambda or SMTP deliveries per subscription; past it new ones go to its DLQ, else are dropped")
	fs.StringVar(&c.allow, "endpoint-allow", "", "CIDR,... : deliveries may connect only to these networks (checked on the resolved address); default anywhere but fanout itself")
}

func (c *deliveryConfig) apply(o *fanout.Options) error {
	if c.backlog < 1 {
		return usagef("--delivery-backlog %d: use a positive number", c.backlog)
	}
	if _, err := delivery.ParseEndpointAllow(c.allow); err != nil {
		return usagef("--endpoint-allow: %v", err)
	}
	o.RecordBytes, o.DeliveryBacklog = int64(c.recordBytes), c.backlog
	if c.allow != "" {
		o.EndpointAllow = strings.Split(c.allow, ",")
	}
	return nil
}

// byteSize is a flag holding a size: 1048576, 512KiB, 64MiB or 1GiB.
type byteSize int64

func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(s string) error {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(s, suffix) {
			s, mult = strings.TrimSuffix(s, suffix), m
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || n > (1<<40)/mult {
		return errors.New("not a size (use e.g. 64MiB, 512KiB or a number of bytes)")
	}
	*b = byteSize(n * mult)
	return nil
}
