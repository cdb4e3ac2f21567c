package api

import (
	"encoding/base64"
	"sort"
	"strings"

	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/sns"
)

// optional returns a pointer to a parameter's value, nil when it was not sent.
func optional(f awswire.Form, name string) *string {
	if !f.Has(name) {
		return nil
	}
	v := f.Get(name)
	return &v
}

// boolParam reads a boolean parameter as AWS's Query protocol does.
func boolParam(f awswire.Form, name string) bool {
	return strings.EqualFold(f.Get(name), "true")
}

// attributesParam reads Attributes.entry.N.key/value.
func attributesParam(f awswire.Form) map[string]string {
	return f.Map("Attributes.entry", "key", "value")
}

// tagsParam reads Tags.member.N.Key/Value, keeping duplicates for the
// engine to refuse.
func tagsParam(f awswire.Form) []sns.Tag {
	var out []sns.Tag
	for _, e := range f.Entries("Tags.member") {
		out = append(out, sns.Tag{Key: e.Get("Key"), Value: e.Get("Value")})
	}
	return out
}

// messageAttributesParam reads MessageAttributes.entry.N.Name and
// .Value.DataType/StringValue/BinaryValue (base64).
func messageAttributesParam(f awswire.Form) ([]sns.MessageAttribute, error) {
	var out []sns.MessageAttribute
	for _, e := range f.Entries("MessageAttributes.entry") {
		a := sns.MessageAttribute{
			Name:        e.Get("Name"),
			DataType:    optional(e, "Value.DataType"),
			StringValue: optional(e, "Value.StringValue"),
		}
		if e.Has("Value.BinaryValue") {
			b, err := base64.StdEncoding.DecodeString(e.Get("Value.BinaryValue"))
			if err != nil {
				return nil, sns.ErrParameterValueInvalid.New("The message attribute '%s' has an invalid base64 BinaryValue.", a.Name)
			}
			if b == nil {
				b = []byte{}
			}
			a.BinaryValue = b
		}
		out = append(out, a)
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
