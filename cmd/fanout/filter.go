package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fanout/fanout/filter"
	"github.com/fanout/fanout/internal/playground"
)

// Exit codes of `fanout filter`, so that scripts can branch on the outcome.
const (
	filterMatched = 0
	filterNoMatch = 1
	filterInvalid = 2 // an invalid policy or scope, or bad usage
)

// filterStdin is what "@-" reads; tests replace it.
var filterStdin io.Reader = os.Stdin

const filterUsage = `usage: fanout filter --policy POLICY [--message BODY] [--attributes ATTRS] [--scope SCOPE] [--json]

Tries an SNS subscription filter policy on one message, offline: validates the
policy as SetSubscriptionAttributes does and tells whether Publish would
deliver the message, key by key.

Each of POLICY, BODY and ATTRS is the text itself, or @FILE to read FILE
(@- reads standard input). Text that starts with @ must come from a file.

Exit status: 0 match, 1 no match, 2 invalid policy or bad usage.

Flags:
`

// runFilter runs `fanout filter` with args (those after "filter") and
// returns its exit status.
func runFilter(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fanout filter", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), filterUsage)
		fs.PrintDefaults()
	}
	policyArg := fs.String("policy", "", `the filter policy, JSON or @FILE (required; "" matches every message)`)
	messageArg := fs.String("message", "", "the message body, text or @FILE (matched in MessageBody scope)")
	attributesArg := fs.String("attributes", "", `message attributes as for aws sns publish --message-attributes, e.g. {"store":{"DataType":"String","StringValue":"eu-west"}} (BinaryValue in base64), JSON or @FILE`)
	scope := fs.String("scope", string(filter.ScopeAttributes), "FilterPolicyScope: MessageAttributes or MessageBody")
	asJSON := fs.Bool("json", false, "print the result as JSON, as POST /_fanout/filter/test answers")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return filterMatched
		}
		return filterInvalid
	}
	usageError := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "fanout filter: "+format+"\n", a...)
		fmt.Fprintln(stderr, "run 'fanout filter -h' for help")
		return filterInvalid
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q (quote the JSON so that the shell passes it as one argument)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["policy"] {
		return usageError("--policy is required")
	}

	var stdinUsed string
	read := func(name, arg string) (string, error) {
		path, isFile := strings.CutPrefix(arg, "@")
		if !isFile {
			return arg, nil
		}
		var b []byte
		var err error
		if path == "-" {
			if stdinUsed != "" {
				return "", fmt.Errorf("--%s: standard input is already read by --%s", name, stdinUsed)
			}
			stdinUsed = name
			b, err = io.ReadAll(filterStdin)
		} else {
			b, err = os.ReadFile(path)
		}
		if err != nil {
			return "", fmt.Errorf("--%s: %w", name, err)
		}
		return string(b), nil
	}
	policy, err := read("policy", *policyArg)
	if err != nil {
		return usageError("%v", err)
	}
	body, err := read("message", *messageArg)
	if err != nil {
		return usageError("%v", err)
	}
	attrText, err := read("attributes", *attributesArg)
	if err != nil {
		return usageError("%v", err)
	}
	attrs, err := playground.ParseAttributes([]byte(attrText))
	if err != nil {
		return usageError("--attributes: %v", err)
	}

	res := playground.Evaluate(policy, filter.Scope(*scope), filter.Message{Body: body, Attributes: attrs})
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(res)
	} else {
		err = playground.WriteText(stdout, res, policy)
	}
	if err != nil {
		fmt.Fprintln(stderr, "fanout filter:", err)
		return filterInvalid
	}
	switch {
	case !res.Valid:
		return filterInvalid
	case res.Matched:
		return filterMatched
	}
	return filterNoMatch
}
