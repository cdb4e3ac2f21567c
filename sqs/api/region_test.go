package api_test

import (
	"strings"
	"testing"

	sqsapi "github.com/fanout/fanout/sqs/api"
)

func TestIsRegion(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"us-east-1": true, "us-gov-west-1": true, "eu-central-2": true, "ap-southeast-10": true,
		"": false, "us": false, "us-east": false, "us-east-": false, "-east-1": false, "us--1": false,
		"US-east-1": false, "us-east-1a": false, "us-3-1": false, "us_east-1": false,
		strings.Repeat("a-", 15) + "1": true, strings.Repeat("a-", 16) + "1": false, // 31 and 33 bytes
	} {
		if got := sqsapi.IsRegion(s); got != want {
			t.Errorf("IsRegion(%q) = %v, want %v", s, got, want)
		}
	}
}
