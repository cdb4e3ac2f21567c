package playground

import (
	"reflect"
	"strings"
	"testing"

	"github.com/fanout/fanout/filter"
)

func TestParseAttributes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		want map[string]filter.Attribute
		err  string // substring of the error; "" for success
	}{
		{name: "empty", in: "", want: map[string]filter.Attribute{}},
		{name: "blank", in: " \n\t", want: map[string]filter.Attribute{}},
		{name: "null", in: "null", want: map[string]filter.Attribute{}},
		{name: "no attributes", in: "{}", want: map[string]filter.Attribute{}},
		{
			name: "every type",
			in: `{"store":{"DataType":"String","StringValue":"eu-west"},
			      "price":{"DataType":"Number","StringValue":"10.5"},
			      "tags":{"DataType":"String.Array","StringValue":"[\"a\",1]"},
			      "blob":{"DataType":"Binary","BinaryValue":"AgME"},
			      "weight":{"DataType":"Number.kg","StringValue":"3"},
			      "empty":{"DataType":"String","StringValue":""}}`,
			want: map[string]filter.Attribute{
				"store":  {DataType: "String", StringValue: "eu-west"},
				"price":  {DataType: "Number", StringValue: "10.5"},
				"tags":   {DataType: "String.Array", StringValue: `["a",1]`},
				"blob":   {DataType: "Binary", BinaryValue: []byte{2, 3, 4}},
				"weight": {DataType: "Number.kg", StringValue: "3"},
				"empty":  {DataType: "String", StringValue: ""},
			},
		},
		{name: "not JSON", in: `{store`, err: "attributes: invalid character"},
		{name: "an array", in: `[1]`, err: "expected an object of attributes"},
		{name: "trailing data", in: `{} {}`, err: "unexpected data after the JSON value"},
		{name: "value not an object", in: `{"store":"eu-west"}`, err: `attribute "store": json: cannot unmarshal string`},
		{name: "no DataType", in: `{"store":{"StringValue":"x"}}`, err: `attribute "store": DataType is missing`},
		{name: "unknown DataType", in: `{"store":{"DataType":"Text","StringValue":"x"}}`, err: `DataType "Text" is not String`},
		{name: "no StringValue", in: `{"store":{"DataType":"String"}}`, err: `attribute "store": StringValue is missing`},
		{name: "no BinaryValue", in: `{"b":{"DataType":"Binary"}}`, err: `BinaryValue is missing`},
		{name: "binary not base64", in: `{"b":{"DataType":"Binary","BinaryValue":"%%"}}`, err: `BinaryValue is not base64`},
		{name: "binary given a string", in: `{"b":{"DataType":"Binary","StringValue":"x"}}`, err: `takes BinaryValue (base64), not StringValue`},
		{name: "string given bytes", in: `{"s":{"DataType":"String","BinaryValue":"AgME"}}`, err: `takes StringValue, not BinaryValue`},
		{name: "misspelt member", in: `{"s":{"DataType":"String","Value":"x"}}`, err: `unknown field "Value"`},
		{name: "first error by name", in: `{"b":{},"a":{}}`, err: `attribute "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAttributes([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}
