package filter

import (
	"math"
	"strconv"
)

// parseNumber reads a decimal number: an optional sign, digits with an
// optional fraction (or a fraction alone), and an optional exponent. It
// refuses what strconv.ParseFloat would otherwise accept but SNS does not
// treat as a number (hex floats, "Inf", "NaN", underscores). It does not
// allocate.
func parseNumber(s string) (float64, bool) {
	f, ok := parseNumberRaw(s)
	if !ok {
		return 0, false
	}
	return quantize(f), true
}

// parseNumberRaw is parseNumber without the rounding.
func parseNumberRaw(s string) (float64, bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && isDigit(s[i]) {
			i++
			exp++
		}
		if exp == 0 {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		// Only a range error is possible after the syntax check above; like
		// Java's parseDouble, take the infinity or zero it rounds to.
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return f, true
}

// quantize rounds to the five decimal places SNS compares numbers with
// ("five digits of accuracy after the decimal point"), so 1.000001 equals 1
// as it does on AWS. Policy and message numbers both go through it, which
// keeps comparisons consistent. Beyond ±1e10 (ten times AWS's documented
// range) the value is left alone: the scaled value would no longer be an
// exact integer in a float64.
//
// https://docs.aws.amazon.com/sns/latest/dg/subscription-filter-policy-constraints.html
func quantize(f float64) float64 {
	if math.Abs(f) < 1e10 {
		return math.Round(f*1e5) / 1e5
	}
	return f
}
