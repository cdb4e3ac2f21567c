package sns

import (
	"sort"

	"github.com/fanout/fanout/awserr"
)

// maxTags is how many tags a topic may carry.
// https://docs.aws.amazon.com/sns/latest/dg/sns-tags-restrictions.html
const maxTags = 50

// checkTags validates a list of tags and returns them as a map.
func checkTags(tags []Tag) (map[string]string, *awserr.Error) {
	if len(tags) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		if _, dup := m[t.Key]; dup {
			return nil, invalid("Duplicated keys are not allowed.")
		}
		if t.Key == "" || len(t.Key) > 128 {
			return nil, invalid("Tags Reason: Tag keys must be between 1 and 128 characters in length.")
		}
		if len(t.Value) > 256 {
			return nil, invalid("Tags Reason: Tag values must be between 0 and 256 characters in length.")
		}
		m[t.Key] = t.Value
	}
	if len(m) > maxTags {
		return nil, tagLimit()
	}
	return m, nil
}

func tagLimit() *awserr.Error {
	return ErrTagLimitExceeded.New("Could not complete request: tag quota of per resource exceeded")
}

// taggable resolves a ResourceArn: only topics carry tags.
func (e *Engine) taggable(resourceArn, action string) (*Topic, error) {
	name, err := e.topicName(resourceArn, "ResourceArn", action)
	if err != nil {
		return nil, err
	}
	e.mu.RLock()
	t := e.topics[name]
	e.mu.RUnlock()
	if t == nil {
		return nil, ErrResourceNotFound.New("Resource does not exist")
	}
	return t, nil
}

// TagResource adds or replaces tags on a topic.
// https://docs.aws.amazon.com/sns/latest/api/API_TagResource.html
func (e *Engine) TagResource(resourceArn string, tags []Tag) error {
	t, err := e.taggable(resourceArn, "TagResource")
	if err != nil {
		return err
	}
	if len(tags) == 0 {
		return Missing("tags")
	}
	add, terr := checkTags(tags)
	if terr != nil {
		return terr
	}
	return t.update(func() error {
		n := len(t.tags)
		for k := range add {
			if _, ok := t.tags[k]; !ok {
				n++
			}
		}
		if n > maxTags {
			return tagLimit()
		}
		if t.tags == nil {
			t.tags = make(map[string]string, len(add))
		}
		for k, v := range add {
			t.tags[k] = v
		}
		return nil
	})
}

// UntagResource removes tags from a topic; absent keys are ignored.
func (e *Engine) UntagResource(resourceArn string, keys []string) error {
	t, err := e.taggable(resourceArn, "UntagResource")
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return Missing("tagKeys")
	}
	return t.update(func() error {
		for _, k := range keys {
			delete(t.tags, k)
		}
		return nil
	})
}

// ListTags returns a topic's tags, sorted by key.
func (e *Engine) ListTags(resourceArn string) ([]Tag, error) {
	t, err := e.taggable(resourceArn, "ListTagsForResource")
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Tag, 0, len(t.tags))
	for k, v := range t.tags {
		out = append(out, Tag{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}
