package sns

import (
	"strings"

	"github.com/fanout/fanout/awserr"
)

// arn is a parsed ARN: arn:partition:service:region:account:resource.
type arn struct {
	service, region, account, resource string
}

// parseArn splits s as AWS does, reporting a malformed ARN in AWS's words
// for the parameter param (TopicArn, SubscriptionArn, ResourceArn, ...).
func parseArn(s, param string) (arn, *awserr.Error) {
	// Cut by hand: every Publish parses its TopicArn.
	var parts [5]string
	rest, ok := s, false
	for i := range parts {
		if parts[i], rest, ok = strings.Cut(rest, ":"); !ok {
			break
		}
	}
	if !ok || parts[0] != "arn" {
		return arn{}, invalid("%s Reason: An ARN must have at least 6 elements, not %d", param, strings.Count(s, ":")+1)
	}
	return arn{service: parts[2], region: parts[3], account: parts[4], resource: rest}, nil
}

// TopicArn returns the ARN of the topic called name.
func (e *Engine) TopicArn(name string) string {
	return "arn:aws:sns:" + e.opts.Region + ":" + e.opts.Account + ":" + name
}

// notAuthorized is what AWS answers for a resource of another account.
func (e *Engine) notAuthorized(action, resource string) *awserr.Error {
	return ErrAuthorization.New("User: arn:aws:iam::%s:root is not authorized to perform: SNS:%s on resource: %s because no resource-based policy allows the SNS:%s action",
		e.opts.Account, action, resource, action)
}

// topicName checks that s is a topic ARN of this region and account and
// returns the topic's name. action names the call for AuthorizationError.
func (e *Engine) topicName(s, param, action string) (string, *awserr.Error) {
	if s == "" {
		return "", Missing(lowerFirst(param))
	}
	a, err := parseArn(s, param)
	if err != nil {
		return "", err
	}
	if a.service != "sns" || a.region != e.opts.Region || strings.Contains(a.resource, ":") {
		return "", invalid("%s", param)
	}
	if a.account != e.opts.Account {
		return "", e.notAuthorized(action, s)
	}
	return a.resource, nil
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
