package sns

import (
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/delivery"
)

// MessageAttribute is a message attribute as a Publish call carried it; nil
// members were not sent.
type MessageAttribute struct {
	Name        string
	DataType    *string
	StringValue *string
	BinaryValue []byte
}

var attrTypeRE = regexp.MustCompile(`^(String|Number|Binary)(\..+)?$`)

// checkAttributes validates published message attributes as SNS does and
// returns them for delivery, in the order given. field is where AWS's
// validator finds them ("messageAttributes", or
// "publishBatchRequestEntries.N.member.messageAttributes").
// https://docs.aws.amazon.com/sns/latest/dg/sns-message-attributes.html
func checkAttributes(in []MessageAttribute, field string) ([]delivery.Attribute, int, *awserr.Error) {
	if len(in) == 0 {
		return nil, 0, nil
	}
	out := make([]delivery.Attribute, 0, len(in))
	size := 0
	for _, a := range in {
		if err := checkAttributeName(a.Name); err != nil {
			return nil, 0, err
		}
		if a.DataType == nil {
			return nil, 0, ErrValidation.New("1 validation error detected: Value null at '%s.%s.member.dataType' failed to satisfy constraint: Member must not be null", field, a.Name)
		}
		dt := *a.DataType
		// The custom label is forwarded as given (raw delivery makes it an
		// SQS DataType), so it holds only what a message may, within SQS's
		// 256 bytes.
		if !attrTypeRE.MatchString(dt) || len(dt) > 256 || !validText(dt) {
			return nil, 0, ErrParameterValueInvalid.New("The message attribute '%s' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String.", a.Name)
		}
		if a.StringValue == nil && a.BinaryValue == nil {
			return nil, 0, emptyValue(a.Name, dt)
		}
		binary := strings.HasPrefix(dt, "Binary")
		switch {
		case binary && a.BinaryValue == nil:
			return nil, 0, ErrParameterValueInvalid.New("The message attribute '%s' with type '%s' must use field 'Binary'.", a.Name, dt)
		case !binary && a.StringValue == nil:
			return nil, 0, ErrParameterValueInvalid.New("The message attribute '%s' with type '%s' must use field 'String'.", a.Name, dt)
		case binary && len(a.BinaryValue) == 0, !binary && *a.StringValue == "":
			return nil, 0, emptyValue(a.Name, dt)
		}
		d := delivery.Attribute{Name: a.Name, DataType: dt}
		if binary {
			d.BinaryValue = a.BinaryValue
		} else {
			d.StringValue = *a.StringValue
			if strings.HasPrefix(dt, "Number") && !validNumber(d.StringValue) {
				return nil, 0, ErrParameterValueInvalid.New("Could not cast message attribute '%s' value to number.", a.Name)
			}
			if !validText(d.StringValue) {
				return nil, 0, ErrParameterValueInvalid.New("The message attribute '%s' contains invalid characters.", a.Name)
			}
		}
		size += len(a.Name) + len(dt) + len(d.StringValue) + len(d.BinaryValue)
		out = append(out, d)
	}
	return out, size, nil
}

func emptyValue(name, dt string) *awserr.Error {
	return ErrParameterValueInvalid.New("The message attribute '%s' must contain non-empty message attribute value for message attribute type '%s'.", name, dt)
}

// checkAttributeName applies SNS's naming rules, in the order AWS reports
// them.
func checkAttributeName(n string) *awserr.Error {
	if len(n) >= 256 {
		return ErrParameterValueInvalid.New("Length of message attribute name must be less than 256 bytes.")
	}
	if n == "" {
		return ErrParameterValueInvalid.New("The message attribute name can not be empty.")
	}
	if n[0] == '.' {
		return ErrParameterValueInvalid.New("Invalid message attribute name starting with character '.' was found.")
	}
	if n[len(n)-1] == '.' {
		return ErrParameterValueInvalid.New("Invalid message attribute name ending with character '.' was found.")
	}
	for i, r := range n {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
		if !ok {
			return ErrParameterValueInvalid.New("Invalid non-alphanumeric character '#x%s' was found in the message attribute name. Can only include alphanumeric characters, hyphens, underscores, or dots.", strings.ToUpper(strconv.FormatInt(int64(r), 16)))
		}
		if r == '.' && i > 0 && n[i-1] == '.' {
			return ErrParameterValueInvalid.New("Message attribute name can not have successive '.' character.")
		}
	}
	return nil
}

// validNumber accepts what SNS's Number type holds: a decimal number of up
// to 38 significant digits between -10^128 and 10^126 (SQS's range, which
// raw delivery must fit).
func validNumber(s string) bool {
	f, ok := new(big.Float).SetString(strings.TrimSpace(s))
	if !ok {
		return false
	}
	mant := strings.TrimLeft(strings.TrimLeft(strings.TrimSpace(s), "+-"), "0")
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		mant = mant[:i]
	}
	if len(strings.Trim(strings.Replace(mant, ".", "", 1), "0")) > 38 {
		return false
	}
	if f.Sign() == 0 {
		return true
	}
	exp := new(big.Float).Abs(f).MantExp(nil)
	return exp <= 419 && exp >= -425
}

// validText reports whether s holds only the characters SNS accepts in a
// message: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
func validText(s string) bool {
	for i, r := range s {
		switch {
		case r == 0xFFFD:
			// Either the character itself, or invalid UTF-8.
			if strings.HasPrefix(s[i:], "\uFFFD") {
				continue
			}
			return false
		case r < 0x20:
			if r != '\t' && r != '\n' && r != '\r' {
				return false
			}
		case r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
			return false
		}
	}
	return true
}

// attributeMap is the attributes as the filter package reads them.
func attributeMap(attrs []delivery.Attribute) map[string]filterAttr {
	if len(attrs) == 0 {
		return nil
	}
	m := make(map[string]filterAttr, len(attrs))
	for _, a := range attrs {
		m[a.Name] = filterAttr{DataType: a.DataType, StringValue: a.StringValue, BinaryValue: a.BinaryValue}
	}
	return m
}
