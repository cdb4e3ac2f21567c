package sqs

import (
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"math/big"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/internal/ascii"
)

// MessageAttribute is a user or system message attribute.
type MessageAttribute struct {
	Name        string
	DataType    string // String, Number or Binary, optionally with a .custom suffix
	StringValue string
	BinaryValue []byte
}

// validBody reports whether s holds only the characters SQS accepts:
// #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
func validBody(s string) bool {
	// Nearly every body is plain ASCII, valid as it stands. What follows the
	// plain run (a tab, UTF-8, a control character) is read rune by rune.
	i := ascii.PlainPrefix(s)
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return false
		}
		if (r >= 0xD800 && r <= 0xDFFF) || r == 0xFFFE || r == 0xFFFF {
			return false
		}
		i += size
	}
	return true
}

const invalidContents = "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"

// MaxMessageAttributes is how many user attributes a message may carry.
const MaxMessageAttributes = 10

// CheckAttributeCount refuses more than MaxMessageAttributes user
// attributes; the wire layer calls it before decoding any of them.
func CheckAttributeCount(n int) *awserr.Error {
	if n > MaxMessageAttributes {
		return ErrInvalidParameterValue.New("Number of message attributes [%d] exceeds the allowed maximum [%d].", n, MaxMessageAttributes)
	}
	return nil
}

// checkAttributes validates user message attributes as AWS does and returns
// them sorted by name.
func checkAttributes(attrs []MessageAttribute) ([]MessageAttribute, *awserr.Error) {
	if err := CheckAttributeCount(len(attrs)); err != nil {
		return nil, err
	}
	if len(attrs) == 0 {
		return nil, nil // most messages: no copy, no sort
	}
	sorted := slices.Clone(attrs)
	slices.SortFunc(sorted, func(a, b MessageAttribute) int { return strings.Compare(a.Name, b.Name) })
	for i, a := range sorted {
		if i > 0 && sorted[i-1].Name == a.Name {
			return nil, ErrInvalidParameterValue.New("Message (user) attribute name %s is already used.", a.Name)
		}
		if err := checkAttributeName(a.Name); err != nil {
			return nil, err
		}
		if err := checkAttributeValue(a, "user"); err != nil {
			return nil, err
		}
	}
	return sorted, nil
}

func checkAttributeName(n string) *awserr.Error {
	if n == "" {
		return ErrInvalidParameterValue.New("The request must contain non-empty message attribute name.")
	}
	if len(n) > 256 {
		return ErrInvalidParameterValue.New("Message (user) attribute name must be shorter than 256 bytes.")
	}
	lower := strings.ToLower(n)
	if strings.HasPrefix(lower, "aws.") || strings.HasPrefix(lower, "amazon.") {
		return ErrInvalidParameterValue.New("You can't use message attribute names beginning with 'AWS.' or 'Amazon.'. These strings are reserved for internal use. Additionally, they cannot be used as prefixes to message attribute names.")
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			return ErrInvalidParameterValue.New("Message (user) attribute name '%s' can only contain alphanumeric characters, hyphens (-), underscores (_), or periods (.).", n)
		}
	}
	if n[0] == '.' || n[len(n)-1] == '.' || strings.Contains(n, "..") {
		return ErrInvalidParameterValue.New("Message (user) attribute name '%s' can't start or end with a period (.), or have consecutive periods (..).", n)
	}
	return nil
}

// checkAttributeValue validates a DataType and its value; kind is "user"
// or "system", as AWS's messages say.
func checkAttributeValue(a MessageAttribute, kind string) *awserr.Error {
	if a.DataType == "" {
		return ErrInvalidParameterValue.New("The message (%s) attribute '%s' must contain a non-empty message attribute type.", kind, a.Name)
	}
	if len(a.DataType) > 256 {
		return ErrInvalidParameterValue.New("Message (%s) attribute '%s' type must be shorter than 256 bytes.", kind, a.Name)
	}
	base, custom, _ := strings.Cut(a.DataType, ".")
	// The custom label is stored and returned as given, so it may hold only
	// what a message body may: anything else would break the XML and JSON
	// replies that carry it back.
	if !validBody(custom) {
		return ErrInvalidParameterValue.New("Message (%s) attribute '%s' type contains invalid characters.", kind, a.Name)
	}
	switch base {
	case "String":
		if a.StringValue == "" {
			return ErrInvalidParameterValue.New("Message (%s) attribute '%s' must contain a non-empty value of type 'String'.", kind, a.Name)
		}
		if !validBody(a.StringValue) {
			return ErrInvalidParameterValue.New("Message (%s) attribute '%s' contains invalid characters.", kind, a.Name)
		}
	case "Number":
		if a.StringValue == "" {
			return ErrInvalidParameterValue.New("Message (%s) attribute '%s' must contain a non-empty value of type 'Number'.", kind, a.Name)
		}
		if !validNumber(a.StringValue) {
			return ErrInvalidParameterValue.New("Can't cast the value of message (%s) attribute '%s' to a number.", kind, a.Name)
		}
	case "Binary":
		if len(a.BinaryValue) == 0 {
			return ErrInvalidParameterValue.New("Message (%s) attribute '%s' must contain a non-empty value of type 'Binary'.", kind, a.Name)
		}
	default:
		return ErrInvalidParameterValue.New("The type of message (%s) attribute '%s' is invalid. You must use only the following supported type prefixes: Binary, Number, String.", kind, a.Name)
	}
	return nil
}

// validNumber accepts what SQS's Number type holds: up to 38 significant
// digits, between -10^128 and 10^126.
func validNumber(s string) bool {
	f, ok := new(big.Float).SetString(strings.TrimSpace(s))
	if !ok {
		return false
	}
	mant := strings.TrimLeft(strings.TrimLeft(s, "+-"), "0")
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		mant = mant[:i]
	}
	digits := strings.Trim(strings.Replace(mant, ".", "", 1), "0")
	if len(digits) > 38 {
		return false
	}
	abs := new(big.Float).Abs(f)
	if abs.Sign() == 0 {
		return true
	}
	exp := abs.MantExp(nil) // abs = m * 2^exp, 0.5 <= m < 1
	// 10^126 ~ 2^418.6; 10^-128 ~ 2^-425.2
	return exp <= 419 && exp >= -425
}

// attributesSize is what attributes add to a message's size: each name,
// data type and value.
func attributesSize(attrs []MessageAttribute) int {
	n := 0
	for _, a := range attrs {
		n += len(a.Name) + len(a.DataType) + len(a.StringValue) + len(a.BinaryValue)
	}
	return n
}

// MD5OfAttributes computes MD5OfMessageAttributes over attrs sorted by name,
// as SQS does: for each, length-prefixed name and data type, a transport byte
// (1 string, 2 binary), then the length-prefixed value.
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html
func MD5OfAttributes(attrs []MessageAttribute) string {
	if len(attrs) == 0 {
		return ""
	}
	h := md5.New()
	var buf [4]byte
	put := func(b []byte) {
		binary.BigEndian.PutUint32(buf[:], uint32(len(b)))
		h.Write(buf[:])
		h.Write(b)
	}
	for _, a := range attrs {
		put([]byte(a.Name))
		put([]byte(a.DataType))
		if strings.HasPrefix(a.DataType, "Binary") {
			h.Write([]byte{2})
			put(a.BinaryValue)
		} else {
			h.Write([]byte{1})
			put([]byte(a.StringValue))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// MD5OfBody is the lower-case hex MD5 of the body's UTF-8 bytes.
func MD5OfBody(body string) string {
	sum := md5.Sum(unsafe.Slice(unsafe.StringData(body), len(body))) // read-only view: []byte(body) copied a 1 KiB body a publish
	var out [32]byte
	hex.Encode(out[:], sum[:])
	return string(out[:])
}

// selectAttributes returns the attributes that names selects: All or .* for
// every one, prefix.* for a prefix, else exact names.
func selectAttributes(attrs []MessageAttribute, names []string) []MessageAttribute {
	if len(names) == 0 || len(attrs) == 0 {
		return nil
	}
	for _, n := range names {
		if n == "All" || n == ".*" {
			return attrs
		}
	}
	var out []MessageAttribute
	for _, a := range attrs {
		for _, n := range names {
			if n == a.Name || strings.HasSuffix(n, ".*") && strings.HasPrefix(a.Name, n[:len(n)-1]) {
				out = append(out, a)
				break
			}
		}
	}
	return out
}
