package sns

import (
	"encoding/base64"
	"strconv"
)

// NextTokens are opaque to clients: the position after which the next page
// starts, base64-encoded.

func encodeToken(after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(after))
}

func decodeToken(token string) (string, error) {
	if token == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) == 0 {
		return "", invalid("NextToken")
	}
	return string(b), nil
}

func encodeSeq(seq uint64) string { return encodeToken(strconv.FormatUint(seq, 10)) }

func decodeSeq(token string) (uint64, error) {
	s, err := decodeToken(token)
	if err != nil || s == "" {
		return 0, err
	}
	n, perr := strconv.ParseUint(s, 10, 64)
	if perr != nil {
		return 0, invalid("NextToken")
	}
	return n, nil
}
