package api

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/fanout/fanout/internal/awserr"
	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/sqs"
)

// input reads a request's members the same way whichever protocol carried
// them. Each method takes the JSON member name and, where the Query protocol
// names it differently, the Query name.
type input interface {
	str(name string) string
	has(name string) bool
	integer(name string) (*int, error)
	list(jsonName, queryName string) []string
	strMap(jsonName, queryName, key, value string) map[string]string
	msgAttrs(jsonName, queryName string) ([]sqs.MessageAttribute, error)
	entries(jsonName, queryName string) []input
}

// jsonInput reads an AWS JSON 1.0 body with gjson, without unmarshalling it.
// The top-level members are indexed in one pass: looking each up with
// gjson.Get would scan the whole body (a 1 MiB message) once per member.
type jsonInput struct{ members []member }

type member struct {
	key string
	val gjson.Result
}

func newJSONInput(v gjson.Result, capHint int) jsonInput {
	j := jsonInput{members: make([]member, 0, capHint)}
	v.ForEach(func(k, val gjson.Result) bool {
		j.members = append(j.members, member{k.Str, val})
		return true
	})
	return j
}

func (j jsonInput) get(name string) gjson.Result {
	for i := range j.members {
		if j.members[i].key == name {
			return j.members[i].val
		}
	}
	return gjson.Result{}
}

func (j jsonInput) str(name string) string {
	r := j.get(name)
	if r.Type == gjson.String {
		return r.Str
	}
	return r.Raw
}

func (j jsonInput) has(name string) bool { return j.get(name).Exists() }

func (j jsonInput) integer(name string) (*int, error) {
	r := j.get(name)
	if !r.Exists() || r.Type == gjson.Null {
		return nil, nil
	}
	var n int
	var err error
	switch r.Type {
	case gjson.Number:
		if r.Num != float64(int(r.Num)) {
			return nil, serialization(name)
		}
		n = int(r.Num)
	case gjson.String:
		n, err = strconv.Atoi(r.Str)
		if err != nil {
			return nil, serialization(name)
		}
	default:
		return nil, serialization(name)
	}
	return &n, nil
}

func serialization(name string) *awserr.Error {
	return sqs.ErrSerialization.New("STRING_VALUE can not be converted to an Integer") // as AWS words it for a bad number
}

func (j jsonInput) list(jsonName, _ string) []string {
	var out []string
	j.get(jsonName).ForEach(func(_, v gjson.Result) bool {
		out = append(out, v.String())
		return true
	})
	return out
}

func (j jsonInput) strMap(jsonName, _, _, _ string) map[string]string {
	r := j.get(jsonName)
	if !r.IsObject() {
		return nil
	}
	out := map[string]string{}
	r.ForEach(func(k, v gjson.Result) bool {
		out[k.String()] = v.String()
		return true
	})
	return out
}

func (j jsonInput) msgAttrs(jsonName, _ string) ([]sqs.MessageAttribute, error) {
	r := j.get(jsonName)
	if !r.IsObject() {
		return nil, nil
	}
	var out []sqs.MessageAttribute
	var err error
	r.ForEach(func(k, v gjson.Result) bool {
		a := sqs.MessageAttribute{Name: k.String(), DataType: v.Get("DataType").String(), StringValue: v.Get("StringValue").String()}
		if b := v.Get("BinaryValue"); b.Exists() {
			a.BinaryValue, err = base64.StdEncoding.DecodeString(b.String())
			if err != nil {
				err = sqs.ErrInvalidParameterValue.New("Message (user) attribute '%s' has an invalid base64 BinaryValue.", a.Name)
				return false
			}
		}
		out = append(out, a)
		return true
	})
	return out, err
}

func (j jsonInput) entries(jsonName, _ string) []input {
	var out []input
	j.get(jsonName).ForEach(func(_, v gjson.Result) bool {
		out = append(out, newJSONInput(v, 4)) // batch entries have few members
		return true
	})
	return out
}

// queryInput reads a Query-protocol form: flattened lists and maps.
type queryInput struct{ f awswire.Form }

func (q queryInput) str(name string) string { return q.f.Get(name) }
func (q queryInput) has(name string) bool   { return q.f.Has(name) }

func (q queryInput) integer(name string) (*int, error) {
	if !q.f.Has(name) {
		return nil, nil
	}
	v := q.f.Get(name)
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return nil, sqs.ErrInvalidParameterValue.New("Value %s for parameter %s is invalid. Reason: Must be an integer.", v, name)
	}
	return &n, nil
}

func (q queryInput) list(_, queryName string) []string { return q.f.List(queryName) }

func (q queryInput) strMap(_, queryName, key, value string) map[string]string {
	return q.f.Map(queryName, key, value)
}

func (q queryInput) msgAttrs(_, queryName string) ([]sqs.MessageAttribute, error) {
	var out []sqs.MessageAttribute
	for _, e := range q.f.Entries(queryName) {
		a := sqs.MessageAttribute{Name: e.Get("Name"), DataType: e.Get("Value.DataType"), StringValue: e.Get("Value.StringValue")}
		if e.Has("Value.BinaryValue") {
			b, err := base64.StdEncoding.DecodeString(e.Get("Value.BinaryValue"))
			if err != nil {
				return nil, sqs.ErrInvalidParameterValue.New("Message (user) attribute '%s' has an invalid base64 BinaryValue.", a.Name)
			}
			a.BinaryValue = b
		}
		out = append(out, a)
	}
	return out, nil
}

func (q queryInput) entries(_, queryName string) []input {
	es := q.f.Entries(queryName)
	out := make([]input, len(es))
	for i, e := range es {
		out[i] = queryInput{e}
	}
	return out
}
