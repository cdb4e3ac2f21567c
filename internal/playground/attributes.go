package playground

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fanout/fanout/filter"
)

// attributeJSON is one message attribute as the AWS CLI's
// `sns publish --message-attributes` writes it. Pointers tell a member
// that is missing from one that is empty.
type attributeJSON struct {
	DataType    string  `json:"DataType"`
	StringValue *string `json:"StringValue"`
	BinaryValue *string `json:"BinaryValue"`
}

// attributeShape is quoted in errors so that people see what is expected.
const attributeShape = `{"DataType":"String","StringValue":"..."}`

// ParseAttributes reads message attributes in the JSON shape of the AWS
// CLI's `sns publish --message-attributes`:
//
//	{"store":{"DataType":"String","StringValue":"eu-west"},
//	 "blob":{"DataType":"Binary","BinaryValue":"AgME"}}
//
// BinaryValue is base64, as the CLI takes it. Empty input and null mean no
// attributes. Errors name the attribute at fault; they are about the shape
// only, since SNS's own Publish checks (name syntax, sizes) do not change
// how a policy matches.
func ParseAttributes(data []byte) (map[string]filter.Attribute, error) {
	data = bytes.TrimSpace(data)
	out := map[string]filter.Attribute{}
	if len(data) == 0 || string(data) == "null" {
		return out, nil
	}
	var raw map[string]json.RawMessage
	if err := strictUnmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("attributes: %v (expected an object of attributes, each like %s)", err, attributeShape)
	}
	// Sorted so that the first error reported does not change between runs.
	names := make([]string, 0, len(raw))
	for n := range raw {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		a, err := parseAttribute(raw[name])
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %v", name, err)
		}
		out[name] = a
	}
	return out, nil
}

func parseAttribute(raw json.RawMessage) (filter.Attribute, error) {
	var aj attributeJSON
	if err := strictUnmarshal(raw, &aj); err != nil {
		return filter.Attribute{}, fmt.Errorf("%v (expected an object like %s)", err, attributeShape)
	}
	if aj.DataType == "" {
		return filter.Attribute{}, fmt.Errorf("DataType is missing; it is String, String.Array, Number or Binary")
	}
	base, _, _ := strings.Cut(aj.DataType, ".")
	switch base {
	case "String", "Number":
		if aj.BinaryValue != nil {
			return filter.Attribute{}, fmt.Errorf("a %s attribute takes StringValue, not BinaryValue", aj.DataType)
		}
		if aj.StringValue == nil {
			return filter.Attribute{}, fmt.Errorf("StringValue is missing")
		}
		return filter.Attribute{DataType: aj.DataType, StringValue: *aj.StringValue}, nil
	case "Binary":
		if aj.StringValue != nil {
			return filter.Attribute{}, fmt.Errorf("a %s attribute takes BinaryValue (base64), not StringValue", aj.DataType)
		}
		if aj.BinaryValue == nil {
			return filter.Attribute{}, fmt.Errorf("BinaryValue is missing")
		}
		b, err := base64.StdEncoding.DecodeString(*aj.BinaryValue)
		if err != nil {
			return filter.Attribute{}, fmt.Errorf("BinaryValue is not base64: %v", err)
		}
		return filter.Attribute{DataType: aj.DataType, BinaryValue: b}, nil
	}
	return filter.Attribute{}, fmt.Errorf("DataType %q is not String, String.Array, Number or Binary", aj.DataType)
}

func strictUnmarshal(data []byte, v any) error { return strictDecode(bytes.NewReader(data), v) }

// strictDecode decodes one JSON value, refusing unknown members (a
// misspelt "StringValue" would otherwise pass as a missing value) and
// anything after the value.
func strictDecode(r io.Reader, v any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return fmt.Errorf("unexpected data after the JSON value")
	}
	return nil
}
