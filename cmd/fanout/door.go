package main

import (
	"flag"
	"os"
	"strings"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/internal/sigv4"
)

// doorConfig is the front door's flags: who may call fanout, and how.
type doorConfig struct {
	allowUnsigned bool
	allowedHosts  string
	credentials   string
	corsOrigins   string
	tls           bool
	tlsCert       string
	tlsKey        string
}

func (d *doorConfig) flags(fs *flag.FlagSet) {
	fs.BoolVar(&d.allowUnsigned, "allow-unsigned", false, "accept Query calls without a SigV4 signature, and as GETs: what any web page can make a browser send")
	fs.StringVar(&d.credentials, "credentials", "", "FILE of access keys, one a line: ACCESS_KEY_ID SECRET [ACCOUNT]; every call must then be signed by one of them, as AWS checks")
	fs.StringVar(&d.corsOrigins, "cors-origins", "", "comma-separated origins of web pages that may call fanout from a browser (https://app.example, http://host:* for any port, or * for every page: unsafe); default pages served from localhost")
	fs.BoolVar(&d.tls, "tls", false, "also serve HTTPS, on the same port, with a self-signed certificate made at start (GET /_fanout/tls/cert.pem hands it out for CA bundles)")
	fs.StringVar(&d.tlsCert, "tls-cert", "", "PEM certificate file to serve HTTPS with (with --tls-key)")
	fs.StringVar(&d.tlsKey, "tls-key", "", "PEM private key file of --tls-cert")
	fs.StringVar(&d.allowedHosts, "allowed-hosts", "", "comma-separated host names fanout answers to besides localhost and IP addresses (name, *.example.com, or * for any); others are refused against DNS rebinding")
}

// apply sets the front door's options.
func (d *doorConfig) apply(o *fanout.Options) error {
	o.AllowUnsigned = d.allowUnsigned
	o.AllowedHosts = splitList(d.allowedHosts)
	o.CORSOrigins = splitList(d.corsOrigins)
	if (d.tlsCert == "") != (d.tlsKey == "") {
		return usagef("--tls-cert and --tls-key go together")
	}
	o.TLS, o.TLSCertFile, o.TLSKeyFile = d.tls, d.tlsCert, d.tlsKey
	if d.credentials != "" {
		f, err := os.Open(d.credentials)
		if err != nil {
			return usagef("--credentials: %v", err)
		}
		defer f.Close()
		keys, err := sigv4.ReadKeys(f)
		if err != nil {
			return usagef("--credentials %s: %v", d.credentials, err)
		}
		for _, k := range keys {
			o.Credentials = append(o.Credentials, fanout.Credential{AccessKeyID: k.ID, SecretAccessKey: k.Secret, Account: k.Account})
		}
	}
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
