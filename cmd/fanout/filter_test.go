package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunFilter(t *testing.T) {
	// Not parallel: one case swaps filterStdin.
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bodyPolicy := write("body-policy.json", "{\n  \"order\": {\"total\": [{\"numeric\": [\">=\", 100]}]}\n}\n")
	order150 := write("order.json", `{"order":{"total":150}}`)
	attrsFile := write("attrs.json", `{"blob":{"DataType":"Binary","BinaryValue":"AgME"}}`)
	badPolicy := write("bad.json", "{\n  \"store\": []\n}")
	eu := `{"store":{"DataType":"String","StringValue":"eu-west"}}`

	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string // exact, unless it starts with "~": then a substring
		stderr string // substring; "" means stderr must be empty
	}{
		{
			name: "match", code: 0,
			args:   []string{"--policy", `{"store":["eu-west"]}`, "--attributes", eu},
			stdout: "match (MessageAttributes scope)\n  ✓ store: \"eu-west\" matches \"eu-west\"\n",
		},
		{
			name: "no match", code: 1,
			args:   []string{"--policy", `{"store":[{"prefix":"us-"}]}`, "--attributes", eu},
			stdout: "no match (MessageAttributes scope)\n  ✗ store: no condition accepts the value\n      message:    \"eu-west\"\n      conditions: {\"prefix\":\"us-\"}\n",
		},
		{
			name: "no attributes at all", code: 1,
			args:   []string{"--policy", `{"store":["eu-west"]}`},
			stdout: "~the message has no attributes, so no MessageAttributes policy matches it",
		},
		{
			name: "empty policy", code: 0,
			args:   []string{"--policy", ""},
			stdout: "match (MessageAttributes scope)\n  the policy is empty: every message passes\n",
		},
		{
			name: "invalid policy", code: 2,
			args:   []string{"--policy", `{"store":[{"numeric":[">",3,"<",1]}]}`},
			stdout: "invalid policy: Invalid parameter: FilterPolicy: Bottom must be less than top\n  at line 1, column 33:\n    {\"store\":[{\"numeric\":[\">\",3,\"<\",1]}]}\n                                    ^\n",
		},
		{
			name: "invalid policy from a file", code: 2,
			args:   []string{"--policy", "@" + badPolicy},
			stdout: "~invalid policy: Invalid parameter: FilterPolicy: Empty arrays are not allowed\n  at line 2, column",
		},
		{
			name: "invalid JSON", code: 2,
			args:   []string{"--policy", `{invalid`},
			stdout: "~invalid policy: Invalid parameter: FilterPolicy: failed to parse JSON. Unexpected character ('i' (code 105)): was expecting double-quote to start field name",
		},
		{
			name: "bad scope", code: 2,
			args:   []string{"--policy", `{}`, "--scope", "Body"},
			stdout: "invalid policy: Invalid parameter: FilterPolicyScope: Invalid value [Body]. Please use either MessageBody or MessageAttributes\n",
		},
		{
			name: "body scope from files", code: 0,
			args:   []string{"--scope", "MessageBody", "--policy", "@" + bodyPolicy, "--message", "@" + order150},
			stdout: "match (MessageBody scope)\n  ✓ order.total: 150 matches {\"numeric\":[\">=\",100]}\n",
		},
		{
			name: "body scope inline", code: 1,
			args:   []string{"--scope", "MessageBody", "--policy", "@" + bodyPolicy, "--message", `{"order":{"total":99.5}}`},
			stdout: "~✗ order.total: no condition accepts any value at this path\n      message:    99.5\n",
		},
		{
			name: "a file name without @ is text", code: 1,
			args:   []string{"--scope", "MessageBody", "--policy", "@" + bodyPolicy, "--message", order150},
			stdout: "~the message body is not valid JSON",
		},
		{
			name: "message from standard input", code: 0, stdin: `{"order":{"total":100}}`,
			args:   []string{"--scope", "MessageBody", "--policy", "@" + bodyPolicy, "--message", "@-"},
			stdout: "~✓ order.total: 100 matches",
		},
		{
			name: "binary attribute from a file", code: 0,
			args:   []string{"--policy", `{"blob":[{"exists":true}]}`, "--attributes", "@" + attrsFile},
			stdout: "match (MessageAttributes scope)\n  ✓ blob: (Binary, 3 bytes) matches {\"exists\":true}\n",
		},
		{
			name: "json output", code: 1,
			args:   []string{"--json", "--policy", `{"store":["us"]}`, "--attributes", eu},
			stdout: "~\"valid\": true,\n  \"matched\": false,\n  \"explanation\": {",
		},
		{
			name: "json output, invalid", code: 2,
			args:   []string{"--json", "--policy", `{"store":[]}`},
			stdout: "~\"error\": \"Invalid parameter: FilterPolicy: Empty arrays are not allowed\",\n  \"errorOffset\": 11,",
		},
		{name: "help", code: 0, args: []string{"-h"}, stderr: "Each of POLICY, BODY and ATTRS is the text itself, or @FILE"},
		{name: "no policy", code: 2, args: []string{"--message", "x"}, stderr: "fanout filter: --policy is required"},
		{name: "unknown flag", code: 2, args: []string{"--policy", "{}", "--body", "x"}, stderr: "flag provided but not defined: -body"},
		{name: "stray argument", code: 2, args: []string{"--policy", "{", "}"}, stderr: `unexpected argument "}"`},
		{name: "missing file", code: 2, args: []string{"--policy", "@" + filepath.Join(dir, "nope.json")}, stderr: "--policy: open "},
		{name: "stdin twice", code: 2, args: []string{"--policy", "@-", "--message", "@-"}, stderr: "--message: standard input is already read by --policy"},
		{name: "attributes not JSON", code: 2, args: []string{"--policy", "{}", "--attributes", "store=eu"}, stderr: "--attributes: attributes: invalid character 's'"},
		{name: "attributes in the wrong shape", code: 2, args: []string{"--policy", "{}", "--attributes", `{"store":"eu-west"}`}, stderr: `--attributes: attribute "store": json: cannot unmarshal string`},
		{name: "attribute without DataType", code: 2, args: []string{"--policy", "{}", "--attributes", `{"store":{"StringValue":"eu-west"}}`}, stderr: `attribute "store": DataType is missing`},
		{name: "binary not base64", code: 2, args: []string{"--policy", "{}", "--attributes", `{"b":{"DataType":"Binary","BinaryValue":"!"}}`}, stderr: `attribute "b": BinaryValue is not base64`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			filterStdin = strings.NewReader(tc.stdin)
			var stdout, stderr strings.Builder
			code := runFilter(tc.args, &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout.String(), stderr.String())
			}
			if want, ok := strings.CutPrefix(tc.stdout, "~"); ok {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			} else if stdout.String() != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), tc.stdout)
			}
			if tc.stderr == "" && stderr.Len() > 0 {
				t.Errorf("stderr: %s", stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr.String())
			}
		})
	}
	filterStdin = os.Stdin
}

func TestRunFilterJSONIsTheEndpointsShape(t *testing.T) {
	var stdout strings.Builder
	runFilter([]string{"--json", "--policy", `{"a":["b"]}`, "--attributes", `{"a":{"DataType":"String","StringValue":"b"}}`}, &stdout, &strings.Builder{})
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if got["valid"] != true || got["matched"] != true || got["explanation"] == nil {
		t.Errorf("%s", stdout.String())
	}
	if _, ok := got["error"]; ok {
		t.Errorf("error present: %s", stdout.String())
	}
}
