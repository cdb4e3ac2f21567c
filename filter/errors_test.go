package filter

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// values returns a JSON array of n distinct strings.
func values(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"value%d"`, i)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// deepPolicy nests a one-value leaf depth levels deep.
func deepPolicy(depth int) string {
	return strings.Repeat(`{"k":`, depth) + `["v"]` + strings.Repeat("}", depth)
}

const jsonLoc = "\n at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); "

type errorCase struct {
	name   string
	scope  Scope
	policy string
	// want is the text after "Invalid parameter: FilterPolicy: ". When
	// it ends with "…", only that prefix is compared.
	want string
}

var errorCases = []errorCase{
	// ---- The messages of the spec (filter-policy.md §5), recorded on AWS. ----
	{"nested-array-value", A, `{"key":[["value"]]}`, "Match value must be String, number, true, false, or null"},
	{"wrong-operator", A, `{"key":[{"wrong-operator":true}]}`, "Unrecognized match type wrong-operator"},
	{"two-operators", A, `{"key":[{"suffix":"value","prefix":"value2"}]}`, "Only one key allowed in match expression"},
	{"empty-array", A, `{"key":[]}`, "Empty arrays are not allowed"},
	{"suffix-number", A, `{"key":[{"suffix":100}]}`, "suffix match pattern must be a string"},
	{"suffix-null", A, `{"key":[{"suffix":null}]}`, "suffix match pattern must be a string"},
	{"suffix-empty-list", A, `{"key":[{"suffix":[]}]}`, "suffix match pattern must be a string"},
	{"suffix-list", A, `{"key":[{"suffix":["test","test2"]}]}`, "suffix match pattern must be a string"},
	{"prefix-number", A, `{"key":[{"prefix":1}]}`, "prefix match pattern must be a string"},
	{"prefix-object", A, `{"key":[{"prefix":{"equals-ignore-case":"x"}}]}`, "prefix match pattern must be a string"},
	{"eic-bool", A, `{"key":[{"equals-ignore-case":true}]}`, "equals-ignore-case match pattern must be a string"},
	{"operator-without-list", A, `{"key":{"suffix":"value"}}`, `"suffix" must be an object or an array`},
	{"two-operators-without-list", A, `{"key":{"suffix":"value","prefix":"value"}}`, `"suffix" must be an object or an array`},
	{"not-operator-without-list", A, `{"key":{"not-an-operator":"value"}}`, `"not-an-operator" must be an object or an array`},
	{"value-not-list", A, `{"key_a":"value_one"}`, `"key_a" must be an object or an array`},
	{"value-not-list-body", B, `{"key_a":"value_one"}`, `"key_a" must be an object or an array`},
	{"cidr-list", A, `{"key":[{"cidr":["bad-filter"]}]}`, "prefix match pattern must be a string"},
	{"cidr-no-slash", A, `{"key":[{"cidr":"bad-filter"}]}`, "Malformed CIDR, one '/' required"},
	{"cidr-bad-ip", A, `{"key":[{"cidr":"bad-filter/24"}]}`, "Nonstandard IP address: bad-filter"},
	{"cidr-mask-not-int", A, `{"key":[{"cidr":"10.0.0.0/xx"}]}`, "Malformed CIDR, mask bits must be an integer"},
	{"cidr-bad-v4", A, `{"key":[{"cidr":"xx.11.xx/24"}]}`, "Nonstandard IP address: xx.11.xx"},
	{"cidr-bad-v6", A, `{"key":[{"cidr":"xxxx:db8:1234:1a00::/64"}]}`, "Nonstandard IP address: xxxx:db8:1234:1a00::"},
	{"numeric-empty", A, `{"key":[{"numeric":[]}]}`, "Invalid member in numeric match: ]"},
	{"numeric-bad-operator", A, `{"key":[{"numeric":["operator"]}]}`, "Unrecognized numeric range operator: operator"},
	{"numeric-operator-order", A, `{"key":[{"numeric":[1,"<="]}]}`, "Invalid member in numeric match: 1"},
	{"numeric-string-value", A, `{"key":[{"numeric":["=","000"]}]}`, "Value of equals must be numeric"},
	{"numeric-missing-value", A, `{"key":[{"numeric":[">="]}]}`, "Value of >= must be numeric"},
	{"numeric-wrong-range-order", A, `{"key":[{"numeric":["<",100,">",10]}]}`, "Too many elements in numeric expression"},
	{"numeric-wrong-range-operators", A, `{"key":[{"numeric":[">=",1,">",2]}]}`, "Bad numeric range operator: >"},
	{"numeric-bottom-above-top", A, `{"key":[{"numeric":[">",3,"<",1]}]}`, "Bottom must be less than top"},
	{"numeric-missing-range-value", A, `{"key":[{"numeric":[">",20,"<="]}]}`, "Value of <= must be numeric"},
	{"numeric-missing-range-operator", A, `{"key":[{"numeric":[">",20,30]}]}`, "Bad value in numeric range: 30"},
	{"numeric-wrong-second-operator", A, `{"key":[{"numeric":[">",20,"test"]}]}`, "Bad numeric range operator: test"},
	{"numeric-range-value-1-type", A, `{"key":[{"numeric":[">","20","<","30"]}]}`, "Value of > must be numeric"},
	{"numeric-range-value-2-type", A, `{"key":[{"numeric":[">",20,"<","30"]}]}`, "Value of < must be numeric"},
	{"numeric-too-many-terms", A, `{"key":[{"numeric":[">",20,"<",30,"<",50]}]}`, "Too many terms in numeric range expression"},
	{"exists-null", A, `{"key":[{"exists":null}]}`, "exists match pattern must be either true or false."},
	{"exists-string", A, `{"key":[{"exists":"no"}]}`, "exists match pattern must be either true or false."},
	{"anything-but-wrong-operator", A, `{"key":[{"anything-but":{"wrong-operator":null}}]}`, "Unsupported anything-but pattern: wrong-operator"},
	{"anything-but-suffix", A, `{"key":[{"anything-but":{"suffix":"test"}}]}`, "Unsupported anything-but pattern: suffix"},
	{"anything-but-exists", A, `{"key":[{"anything-but":{"exists":false}}]}`, "Unsupported anything-but pattern: exists"},
	{"anything-but-prefix-bool", A, `{"key":[{"anything-but":{"prefix":false}}]}`, "prefix match pattern must be a string"},
	{"too-complex-one-key", A, `{"key":` + values(151) + `}`, "Filter policy is too complex"},
	{"too-complex-two-keys", A, `{"key1":` + values(100) + `,"key2":` + values(51) + `}`, "Filter policy is too complex"},
	{"too-many-keys", A, `{"key1":["value1"],"key2":["value2"],"key3":["value3"],"key4":["value4"],"key5":["value5"],"key6":["value6"]}`, "Filter policy can not have more than 5 keys"},
	{"too-many-keys-body", B, `{"key_a":["value_one"],"key_b":["value_two"],"key_c":["value_three"],"key_d":["value_four"],"key_e":["value_five"],"key_f":["value_six"]}`, "Filter policy can not have more than 5 keys"},
	{"invalid-json", A, `{invalid`, "failed to parse JSON. Unexpected character ('i' (code 105)): was expecting double-quote to start field name" + jsonLoc + "line: 1, column: 2]"},
	// LocalStack's recorded complexity examples.
	{"too-complex-or-flat-152", A, `{"source":["aws.cloudwatch","aws.events","aws.test","aws.test2"],"$or":[{"metricName":["CPUUtilization","ReadLatency","t1","t2","t3","t4"]},{"metricType":["MetricType","TestType","TestType2","TestType3"],"$or":[{"metricId":[1234,4321,5678,9012]},{"spaceId":[1,2,3,4]}]}]}`, "Filter policy is too complex"},
	{"too-complex-or-nested-160", B, `{"$or":[{"metricName":["CPUUtilization","ReadLatency","TestValue"]},{"namespace":["AWS/EC2","AWS/ES"]}],"detail":{"scope":["Service","Test"],"$or":[{"source":["aws.cloudwatch"]},{"type":["CloudWatch Alarm State Change","TestValue","TestValue2"]}]}}`, "Filter policy is too complex"},
	{"too-complex-nested-216", B, `{"key_a":{"key_b":{"key_c":["value_one","value_two","value_three","value_four"]}},"key_d":{"key_e":["value_one","value_two","value_three"]},"key_f":["value_one","value_two","value_three"]}`, "Filter policy is too complex"},

	// ---- Structure. ----
	{"not-object-array", A, `[]`, "Filter is not an object"},
	{"not-object-string", A, `"x"`, "Filter is not an object"},
	{"not-object-null", B, `null`, "Filter is not an object"},
	{"empty-nested-object", B, `{"a":{}}`, "Empty objects are not allowed"},
	{"empty-match-expression", A, `{"a":[{}]}`, "Match expression name not found"},
	{"empty-array-nested", B, `{"a":{"b":[]}}`, "Empty arrays are not allowed"},
	{"nested-number-value", B, `{"a":{"b":5}}`, `"b" must be an object or an array`},
	{"key-quoted-verbatim", A, `{"we\"ird":1}`, `"we"ird" must be an object or an array`},
	{"or-not-array", A, `{"$or":{"a":["x"]}}`, "It must be an Array followed with $or."},
	{"or-not-objects", A, `{"$or":["a","b"]}`, "Only JSON object is allowed in array of $or relationship."},
	{"or-one-branch", A, `{"$or":[{"a":["x"]}]}`, "There must have at least 2 Objects in $or relationship."},
	{"or-empty", A, `{"$or":[]}`, "There must have at least 2 Objects in $or relationship."},
	{"or-empty-branch", A, `{"$or":[{},{"a":["x"]}]}`, "Empty objects are not allowed"},
	{"or-as-operator", A, `{"a":[{"$or":[{"b":["x"]},{"c":["y"]}]}]}`, "Unrecognized match type $or"},

	// ---- Operators. ----
	{"wildcard", A, `{"a":[{"wildcard":"x*"}]}`, "Unrecognized match type wildcard"},
	{"exact-operator", A, `{"a":[{"exact":"x"}]}`, "Unrecognized match type exact"},
	{"numeric-not-array", A, `{"a":[{"numeric":5}]}`, "Value of numeric must be an array."},
	{"numeric-extra-key", A, `{"a":[{"numeric":[">",1],"prefix":"x"}]}`, "Too many elements in numeric expression"},
	{"numeric-eq-extra", A, `{"a":[{"numeric":["=",1,2]}]}`, "Too many elements in numeric expression"},
	{"numeric-equal-bounds", A, `{"a":[{"numeric":[">=",1,"<=",1]}]}`, "Bottom must be less than top"},
	{"numeric-member-object", A, `{"a":[{"numeric":[{"x":1}]}]}`, "Invalid member in numeric match: {"},
	{"numeric-bad-range-value-bool", A, `{"a":[{"numeric":[">",1,true]}]}`, "Bad value in numeric range: true"},
	{"exists-extra-key", A, `{"a":[{"exists":true,"prefix":"x"}]}`, "Only one key allowed in match expression"},
	{"anything-but-mixed", A, `{"a":[{"anything-but":["x",1]}]}`, "Inside anything but list, either all values are number or string, mixed type is not supported"},
	{"anything-but-empty-list", A, `{"a":[{"anything-but":[]}]}`, "Inside anything but list, either all values are number or string, mixed type is not supported"},
	{"anything-but-list-bool", A, `{"a":[{"anything-but":["x",true]}]}`, "Inside anything but list, start|null|boolean is not supported."},
	{"anything-but-list-object", A, `{"a":[{"anything-but":[{"prefix":"x"}]}]}`, "Inside anything but list, start|null|boolean is not supported."},
	{"anything-but-null", A, `{"a":[{"anything-but":null}]}`, "Inside anything-but list, start|null|boolean is not supported."},
	{"anything-but-empty-object", A, `{"a":[{"anything-but":{}}]}`, "Anything-But expression name not found"},
	{"anything-but-equals-ignore-case", A, `{"a":[{"anything-but":{"equals-ignore-case":"x"}}]}`, "Unsupported anything-but pattern: equals-ignore-case"},
	{"anything-but-empty-prefix", A, `{"a":[{"anything-but":{"prefix":""}}]}`, "Null prefix not allowed"},
	{"anything-but-prefix-extra", A, `{"a":[{"anything-but":{"prefix":"x","suffix":"y"}}]}`, "Only one key allowed in match expression"},
	{"anything-but-outer-extra", A, `{"a":[{"anything-but":"x","prefix":"y"}]}`, "Too many elements in numeric expression"},
	{"anything-but-prefix-outer-extra", A, `{"a":[{"anything-but":{"prefix":"x"},"prefix":"y"}]}`, "Only one key allowed in match expression"},
	{"cidr-mask-32", A, `{"a":[{"cidr":"10.0.0.1/32"}]}`, "IPv4 mask bits must be < 32"},
	{"cidr-mask-128", A, `{"a":[{"cidr":"::1/128"}]}`, "IPv6 mask bits must be < 128"},
	{"cidr-mask-negative", A, `{"a":[{"cidr":"10.0.0.0/-1"}]}`, "Malformed CIDR, mask bits must not be negative"},
	{"cidr-two-slashes", A, `{"a":[{"cidr":"10.0.0.0/8/8"}]}`, "Malformed CIDR, one '/' required"},
	{"cidr-trailing-slash", A, `{"a":[{"cidr":"10.0.0.0/"}]}`, "Malformed CIDR, one '/' required"},
	{"cidr-empty-ip", A, `{"a":[{"cidr":"/8"}]}`, "Nonstandard IP address: "},
	{"cidr-zone", A, `{"a":[{"cidr":"fe80::1%eth0/64"}]}`, "Nonstandard IP address: fe80::1%eth0"},
	{"cidr-mask-overflow", A, `{"a":[{"cidr":"10.0.0.0/99999999999"}]}`, "Malformed CIDR, mask bits must be an integer"},

	// ---- Limits. ----
	{"too-many-keys-or-branch", A, `{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"$or":[{"e":["1"]},{"f":["1"],"g":["1"]}]}`, "Filter policy can not have more than 5 keys"},
	{"too-many-keys-nested-leaves", B, `{"a":{"b":["1"],"c":["1"],"d":{"e":["1"],"f":["1"],"g":["1"]}},"h":["1"]}`, "Filter policy can not have more than 5 keys"},
	{"too-many-keys-attr-nested", A, `{"a":{"b":["1"]},"b":["1"],"c":["1"],"d":["1"],"e":["1"],"f":["1"]}`, "Filter policy can not have more than 5 keys"},
	{"too-complex-depth", B, deepPolicy(151), "Filter policy is too complex"},
	{"too-complex-depth-product", B, deepPolicy(10)[:len(deepPolicy(10))-1] + `,"x":` + values(16) + "}", "Filter policy is too complex"},
	{"too-large", A, `{"a":["` + strings.Repeat("x", MaxPolicySize) + `"]}`, "Filter policy can not be larger than 256 KB"},

	// ---- The order of checks. ----
	{"order-keys-before-shape", A, `{"a":"x","b":["1"],"c":["1"],"d":["1"],"e":["1"],"f":["1"]}`, "Filter policy can not have more than 5 keys"},
	{"order-shape-before-conditions", A, `{"a":[{"prefix":1}],"b":"x"}`, `"b" must be an object or an array`},
	{"order-shape-before-nested", A, `{"a":{"b":["x"]},"c":"x"}`, `"c" must be an object or an array`},
	{"order-complex-before-conditions", A, `{"a":[{"prefix":1}],"b":` + values(151) + `}`, "Filter policy is too complex"},
	{"order-conditions-in-document-order", A, `{"a":[{"suffix":1}],"b":[{"prefix":1}]}`, "suffix match pattern must be a string"},
	{"order-value-before-extra-key", A, `{"a":[{"suffix":100,"prefix":"x"}]}`, "suffix match pattern must be a string"},
	{"order-unknown-before-extra-key", A, `{"a":[{"nope":1,"prefix":"x"}]}`, "Unrecognized match type nope"},

	// ---- JSON syntax, in Jackson's words. ----
	{"json-whitespace-only", A, "   ", "failed to parse JSON. No content to map due to end-of-input…"},
	{"json-unterminated-object", A, `{"a":["x"]`, "failed to parse JSON. Unexpected end-of-input: expected close marker for Object (start marker at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 1])…"},
	{"json-unterminated-array", A, `{"a":["x"`, "failed to parse JSON. Unexpected end-of-input: expected close marker for Array…"},
	{"json-unterminated-string", A, `{"a":["x`, "failed to parse JSON. Unexpected end-of-input: was expecting closing quote for a string value…"},
	{"json-trailing-comma-array", A, `{"a":["x",]}`, "failed to parse JSON. Unexpected character (']' (code 93)): expected a valid value (JSON String, Number, Array, Object or token 'null', 'true' or 'false')" + jsonLoc + "line: 1, column: 11]"},
	{"json-trailing-comma-object", A, `{"a":["x"],}`, "failed to parse JSON. Unexpected character ('}' (code 125)): was expecting double-quote to start field name…"},
	{"json-single-quotes", A, `{'a':['x']}`, "failed to parse JSON. Unexpected character (''' (code 39)): was expecting double-quote to start field name…"},
	{"json-missing-colon", A, `{"a" ["x"]}`, "failed to parse JSON. Unexpected character ('[' (code 91)): was expecting a colon to separate field name and value…"},
	{"json-missing-comma-object", A, `{"a":["x"] "b":["y"]}`, "failed to parse JSON. Unexpected character ('\"' (code 34)): was expecting comma to separate Object entries…"},
	{"json-missing-comma-array", A, `{"a":["x" "y"]}`, "failed to parse JSON. Unexpected character ('\"' (code 34)): was expecting comma to separate Array entries…"},
	{"json-mismatched-close", A, `{"a":["x"}}`, "failed to parse JSON. Unexpected close marker '}': expected ']' (for Array starting at [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: 1, column: 6])…"},
	{"json-bad-token", A, `{"a":[tru]}`, "failed to parse JSON. Unrecognized token 'tru': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')…"},
	{"json-bad-escape", A, `{"a":["\x"]}`, "failed to parse JSON. Unrecognized character escape 'x' (code 120)…"},
	{"json-control-char", A, "{\"a\":[\"x\ty\"]}", "failed to parse JSON. Illegal unquoted character ((CTRL-CHAR, code 9)): has to be escaped using backslash to be included in string value…"},
	{"json-leading-zero", A, `{"a":[01]}`, "failed to parse JSON. Invalid numeric value: Leading zeroes not allowed…"},
	{"json-bare-minus", A, `{"a":[-]}`, "failed to parse JSON. Unexpected character (']' (code 93)) in numeric value: expected digit (0-9) to follow minus sign, for valid numeric value…"},
	{"json-bad-fraction", A, `{"a":[1.]}`, "failed to parse JSON. Unexpected character (']' (code 93)) in numeric value: Decimal point not followed by a digit…"},
	{"json-bad-exponent", A, `{"a":[1e]}`, "failed to parse JSON. Unexpected character (']' (code 93)) in numeric value: Exponent indicator not followed by a digit…"},
	{"json-bad-unicode-escape", A, `{"a":["\u12g4"]}`, "failed to parse JSON. Unexpected character ('g' (code 103)): expected a hex-digit for character escape sequence…"},
	{"json-non-ascii-char", A, `{"a":[é]}`, "failed to parse JSON. Unrecognized token 'é'…"},
	{"json-line-column", A, "{\n  \"a\": [\"x\"],\n  b\n}", "failed to parse JSON. Unexpected character ('b' (code 98)): was expecting double-quote to start field name" + jsonLoc + "line: 3, column: 3]"},
	{"json-too-deep", B, strings.Repeat("[", 1001), "failed to parse JSON. Document nesting depth (1001) exceeds the maximum allowed (1000, from `StreamReadConstraints.getMaxNestingDepth()`)…"},
}

func TestCompileErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range errorCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Compile(tc.policy, tc.scope)
			if err == nil {
				t.Fatalf("Compile(%.200s) accepted the policy (%d alternatives)", tc.policy, len(p.alts))
			}
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not *Error", err)
			}
			want, prefix := strings.CutSuffix(tc.want, "…")
			got := fe.Message()
			if prefix && !strings.HasPrefix(got, want) || !prefix && got != want {
				t.Fatalf("message\n got: %q\nwant: %q", got, tc.want)
			}
			if fe.Param != "FilterPolicy" {
				t.Fatalf("Param = %q", fe.Param)
			}
			if fe.Error() != "Invalid parameter: FilterPolicy: "+got {
				t.Fatalf("Error() = %q", fe.Error())
			}
			if fe.SubscribeMessage() != "Invalid parameter: Attributes Reason: FilterPolicy: "+got {
				t.Fatalf("SubscribeMessage() = %q", fe.SubscribeMessage())
			}
			if fe.Offset < -1 || fe.Offset > len(tc.policy) {
				t.Fatalf("Offset %d outside the policy", fe.Offset)
			}
		})
	}
}

func TestNestedPolicyInAttributeScope(t *testing.T) {
	t.Parallel()
	for _, policy := range []string{
		`{"object":{"key":[{"prefix":"auto-"}]}}`,
		`{"$or":[{"a":["x"]},{"b":{"c":["y"]}}]}`,
	} {
		_, err := Compile(policy, ScopeAttributes)
		var fe *Error
		if !errors.As(err, &fe) {
			t.Fatalf("%s: error %v", policy, err)
		}
		if got := fe.Error(); got != "Invalid parameter: Filter policy scope MessageAttributes does not support nested filter policy" {
			t.Fatalf("%s: %q", policy, got)
		}
		if got := fe.SubscribeMessage(); got != "Invalid parameter: Attributes Reason: Filter policy scope MessageAttributes does not support nested filter policy" {
			t.Fatalf("%s: %q", policy, got)
		}
		if _, err := Compile(policy, ScopeBody); err != nil {
			t.Fatalf("%s in body scope: %v", policy, err)
		}
	}
}

func TestScope(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Scope{"": ScopeAttributes, "MessageAttributes": ScopeAttributes, "MessageBody": ScopeBody} {
		got, err := ParseScope(in)
		if err != nil || got != want {
			t.Fatalf("ParseScope(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"RandomValue", "messagebody", " MessageBody"} {
		_, err := ParseScope(in)
		var fe *Error
		if !errors.As(err, &fe) {
			t.Fatalf("ParseScope(%q): %v", in, err)
		}
		want := "Invalid parameter: FilterPolicyScope: Invalid value [" + in + "]. Please use either MessageBody or MessageAttributes"
		if fe.Error() != want {
			t.Fatalf("ParseScope(%q): %q", in, fe.Error())
		}
		if _, err := Compile(`{"a":["x"]}`, Scope(in)); err == nil || err.Error() != want {
			t.Fatalf("Compile with scope %q: %v", in, err)
		}
	}
}

// validPolicies are accepted, with the complexity AWS computes for them.
var validPolicies = []struct {
	name   string
	scope  Scope
	policy string
	combos int
}{
	{"exactly-150-with-or", A, `{"source":["aws.cloudwatch","aws.events","aws.test"],"$or":[{"metricName":["CPUUtilization","ReadLatency","TestVal","TestVal2","TestVal3","TestVal4"]},{"metricType":["MetricType","TestType","TestType2","TestType3"],"$or":[{"metricId":[1234,4321,5678,9012]},{"spaceId":[1,2,3,4,5,6,7]}]}]}`, 150},
	{"doc-nested-72", B, `{"key_a":{"key_b":{"key_c":["value_one","value_two","value_three","value_four"]}},"key_d":{"key_e":["value_one","value_two","value_three"]}}`, 72},
	{"150-values", A, `{"key":` + values(150) + `}`, 150},
	{"depth-150", B, deepPolicy(150), 150},
	{"doc-parent-keys-not-counted", B, `{"state":["SUCCESS"],"severity":[{"exists":true}],"message":[{"exists":true}],"finding":{"standard_control":[{"exists":true}],"region":[{"exists":true}]}}`, 1 * 1 * 1 * 2 * 2},
	{"five-keys-with-or", A, `{"a":["1"],"b":["1"],"c":["1"],"d":["1"],"$or":[{"e":["1"]},{"f":["1"]}]}`, 2},
	{"out-of-range-numbers", A, `{"a":[{"numeric":[">",-1e12,"<",1e12]},1e400]}`, 2},
	{"cidr-trailing-slash-after-mask", A, `{"a":[{"cidr":"10.0.0.0/24/"}]}`, 1},
	{"cidr-plus-mask", A, `{"a":[{"cidr":"10.0.0.0/+8"}]}`, 1},
	{"trailing-content-ignored", A, `{"a":["x"]} trailing`, 1},
	{"anything-but-prefix", A, `{"key":[{"anything-but":{"prefix":"test-"}}]}`, 1},
	{"anything-but-list", A, `{"key":[{"anything-but":["test","test2"]}]}`, 1},
	{"anything-but-string", A, `{"key":[{"anything-but":"test"}]}`, 1},
	{"duplicate-operator-key", A, `{"a":[{"prefix":"x","prefix":"y"}]}`, 1},
	{"dotted-and-nested-same-path", B, `{"a.b":["1"],"a":{"b":["2"]}}`, 2},
	{"unicode-escapes", A, `{"\u00e9":["\ud83d\ude00"]}`, 1},
	{"max-size", A, `{"a":["` + strings.Repeat("x", MaxPolicySize-10) + `"]}`, 1},
}

func TestValidPolicies(t *testing.T) {
	t.Parallel()
	for _, tc := range validPolicies {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := Compile(tc.policy, tc.scope)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if p.Combinations() != tc.combos {
				t.Fatalf("Combinations = %d, want %d", p.Combinations(), tc.combos)
			}
		})
	}
}
