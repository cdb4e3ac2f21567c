// Package iampolicy edits the IAM policy documents that SQS queues and SNS
// topics keep in their Policy attribute, as AddPermission and
// RemovePermission do: one Allow statement per label.
package iampolicy

import (
	"encoding/json"
	"strings"
)

// Document is a policy document. Statements stay raw JSON, so statements a
// user wrote by hand survive an edit untouched.
type Document struct {
	Version   string            `json:"Version"`
	ID        string            `json:"Id,omitempty"`
	Statement []json.RawMessage `json:"Statement"`
}

// Parse reads a policy document.
func Parse(text string) (*Document, error) {
	var d Document
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Has reports whether a statement has this Sid.
func (d *Document) Has(sid string) bool {
	for _, raw := range d.Statement {
		if statementSid(raw) == sid {
			return true
		}
	}
	return false
}

// AddAllow appends a statement allowing principals (ARNs) to perform actions
// (with their service prefix, e.g. "SQS:SendMessage") on resource. A single
// principal or action is written as a string, several as a list, as AWS does.
func (d *Document) AddAllow(sid string, principals, actions []string, resource string) {
	st := struct {
		Sid       string `json:"Sid"`
		Effect    string `json:"Effect"`
		Principal struct {
			AWS any `json:"AWS"`
		} `json:"Principal"`
		Action   any    `json:"Action"`
		Resource string `json:"Resource"`
	}{Sid: sid, Effect: "Allow", Action: oneOrMany(actions), Resource: resource}
	st.Principal.AWS = oneOrMany(principals)
	raw, _ := json.Marshal(st)
	d.Statement = append(d.Statement, raw)
}

// Remove drops the statements with this Sid and reports whether there were any.
func (d *Document) Remove(sid string) bool {
	kept := d.Statement[:0]
	for _, raw := range d.Statement {
		if statementSid(raw) != sid {
			kept = append(kept, raw)
		}
	}
	found := len(kept) != len(d.Statement)
	d.Statement = kept
	return found
}

// String renders the document as compact JSON.
func (d *Document) String() string {
	b, _ := json.Marshal(d)
	return string(b)
}

// AccountPrincipal turns an account id into its root principal ARN; an ARN
// is kept as given.
func AccountPrincipal(account string) string {
	if strings.HasPrefix(account, "arn:") {
		return account
	}
	return "arn:aws:iam::" + account + ":root"
}

// Prefixed returns actions with a service prefix, e.g. "SQS:".
func Prefixed(prefix string, actions []string) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = prefix + a
	}
	return out
}

func statementSid(raw json.RawMessage) string {
	var s struct{ Sid string }
	_ = json.Unmarshal(raw, &s)
	return s.Sid
}

func oneOrMany(v []string) any {
	if len(v) == 1 {
		return v[0]
	}
	return v
}
