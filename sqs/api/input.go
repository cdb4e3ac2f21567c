package api

import (
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/fanout/fanout/awserr"
	"github.com/fanout/fanout/internal/awswire"
	"github.com/fanout/fanout/sqs"
)

// input reads a request's members the same way whichever protocol carried
// them. Each method takes the JSON member name and, where the Query protocol
// names it differently, the Query name.
type input interface {
	str(name string) string
	// plain reports whether str(name) is known to hold only plain ASCII
	// (0x20 to 0x7f), which every SQS rule for text accepts; false when
	// the decoder did not see it so.
	plain(name string) bool
	has(name string) bool
	integer(name string) (*int, error)
	list(jsonName, queryName string) []string
	strMap(jsonName, queryName, key, value string) map[string]string
	msgAttrs(jsonName, queryName string) ([]sqs.MessageAttribute, error)
	// size is the number of items of a list or map, read without decoding
	// them, so that limits are checked before any work per item.
	size(jsonName, queryName string) int
	entries(jsonName, queryName string) []input
}

// jsonInput reads an AWS JSON 1.0 body with gjson, without unmarshalling it.
// The members SQS knows are checked against their shapes and indexed in one
// pass (looking each up with gjson.Get would scan the whole body, a 1 MiB
// message, once per member); unknown members are skipped, as AWS skips them.
// A request's members and its batch entries live in a jsonDecoder's
// buffers, reused from request to request.
type jsonInput struct {
	members []member
	d       *jsonDecoder // the request's decoder; nil on a batch entry
}

type member struct {
	key string
	val gjson.Result
	// plain says val is a string of plain ASCII (0x20 to 0x7f) with no
	// escape, seen so as the one-pass decoder read it: a text with no
	// character any SQS rule refuses, which need not be checked again.
	plain bool
}

// maxIndexedEntries is how many batch entries are indexed with the request:
// every batch action takes at most 10, and more are refused by their count
// (sqs.CheckBatchSize) before any is read.
const maxIndexedEntries = 10

// jsonDecoder checks and indexes one JSON request; its buffers are pooled.
type jsonDecoder struct {
	top     jsonInput
	members []member    // the request's own members
	arena   []member    // the members of its entries, one run per entry
	entries []jsonInput // the last Entries member's non-null entries
	inputs  []input     // entries as inputs, handed to the actions
	// moreEntries says the Entries member held more than maxIndexedEntries:
	// entries then indexes them when asked.
	moreEntries bool
	entriesRaw  gjson.Result
}

var decoders = sync.Pool{New: func() any {
	return &jsonDecoder{members: make([]member, 0, 8), arena: make([]member, 0, 32), entries: make([]jsonInput, 0, maxIndexedEntries), inputs: make([]input, 0, maxIndexedEntries)}
}}

// maxPooledMembers bounds the buffers a decoder keeps for the next request.
const maxPooledMembers = 256

// release clears the decoder (its members point into the request body) and
// returns it to the pool.
func (d *jsonDecoder) release() {
	if cap(d.arena) > maxPooledMembers || cap(d.members) > maxPooledMembers {
		return
	}
	clear(d.members)
	clear(d.arena[:cap(d.arena)])
	clear(d.entries)
	clear(d.inputs)
	*d = jsonDecoder{members: d.members[:0], arena: d.arena[:0], entries: d.entries[:0], inputs: d.inputs[:0]}
	decoders.Put(d)
}

// decode checks a request's members against their shapes and indexes them
// with its first batch entries, in one pass over each level. An explicit
// null is an absent member, as AWS's JSON protocols treat it; a value of the
// wrong type is the SerializationException AWS answers, worded as AWS words it.
func (d *jsonDecoder) decode(v gjson.Result) (*jsonInput, *awserr.Error) {
	if err := checkStructure(v); err != nil {
		return nil, err
	}
	var err *awserr.Error
	v.ForEach(func(k, val gjson.Result) bool {
		sh, ok := memberShape(k.Str, true)
		if !ok {
			return true
		}
		if sh == shapeEntries {
			err = d.checkEntries(val)
		} else {
			err = checkShape(val, sh)
		}
		if err == nil && val.Type != gjson.Null {
			d.members = addMember(d.members, 0, k.Str, val, false)
		}
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	d.top = jsonInput{members: d.members, d: d}
	return &d.top, nil
}

// addMember appends a member to the run of ms starting at from, or replaces
// the value of a repeated one: the last one wins.
func addMember(ms []member, from int, key string, val gjson.Result, plain bool) []member {
	for i := from; i < len(ms); i++ {
		if ms[i].key == key {
			ms[i].val, ms[i].plain = val, plain
			return ms
		}
	}
	return append(ms, member{key, val, plain})
}

// checkEntries checks an Entries member and indexes its first entries.
func (d *jsonDecoder) checkEntries(v gjson.Result) *awserr.Error {
	d.entries, d.moreEntries, d.entriesRaw = d.entries[:0], false, v
	if v.Type == gjson.Null {
		return nil
	}
	if err := checkListShape(v); err != nil {
		return err
	}
	var err *awserr.Error
	v.ForEach(func(_, e gjson.Result) bool {
		if e.Type == gjson.Null || d.moreEntries {
			err = checkMembers(e, false)
			return err == nil
		}
		if len(d.entries) == maxIndexedEntries {
			d.moreEntries = true
			err = checkMembers(e, false)
			return err == nil
		}
		var in jsonInput
		in, err = d.indexEntry(e)
		if err == nil {
			d.entries = append(d.entries, in)
		}
		return err == nil
	})
	return err
}

// indexEntry checks one batch entry and indexes its members in the arena.
func (d *jsonDecoder) indexEntry(e gjson.Result) (jsonInput, *awserr.Error) {
	if err := checkStructure(e); err != nil {
		return jsonInput{}, err
	}
	from := len(d.arena)
	var err *awserr.Error
	e.ForEach(func(k, val gjson.Result) bool {
		sh, ok := memberShape(k.Str, false)
		if !ok {
			return true
		}
		if err = checkShape(val, sh); err == nil && val.Type != gjson.Null {
			d.arena = addMember(d.arena, from, k.Str, val, false)
		}
		return err == nil
	})
	// The run's capacity ends where it does, so that nothing appended to the
	// arena later can show through it.
	return jsonInput{members: d.arena[from:len(d.arena):len(d.arena)]}, err
}

// shape is the JSON type of a request member.
type shape uint8

const (
	shapeString         shape = iota + 1
	shapeInteger              // a JSON number, integral and in Java int range
	shapeStringList           // [string, ...]
	shapeStringMap            // {string: string}
	shapeAttributeMap         // {name: {DataType, StringValue, BinaryValue, ...}}
	shapeEntries              // [{member: value}, ...], batch entries
	shapeBlob                 // a base64 string
	shapeBlobList             // [base64, ...]
	shapeAttributeValue       // one MessageAttributeValue structure
)

// shapes are the members of every SQS request and batch entry, by JSON
// name; the same name has the same shape in every action.
var shapes = map[string]shape{
	"QueueUrl": shapeString, "QueueName": shapeString, "MessageBody": shapeString,
	"MessageGroupId": shapeString, "MessageDeduplicationId": shapeString, "ReceiptHandle": shapeString,
	"Id": shapeString, "Label": shapeString, "NextToken": shapeString, "QueueNamePrefix": shapeString,
	"QueueOwnerAWSAccountId": shapeString, "ReceiveRequestAttemptId": shapeString,
	"SourceArn": shapeString, "DestinationArn": shapeString, "TaskHandle": shapeString,
	"DelaySeconds": shapeInteger, "MaxNumberOfMessages": shapeInteger, "VisibilityTimeout": shapeInteger,
	"WaitTimeSeconds": shapeInteger, "MaxResults": shapeInteger, "MaxNumberOfMessagesPerSecond": shapeInteger,
	"AttributeNames": shapeStringList, "MessageSystemAttributeNames": shapeStringList,
	"MessageAttributeNames": shapeStringList, "TagKeys": shapeStringList,
	"AWSAccountIds": shapeStringList, "Actions": shapeStringList,
	"Attributes": shapeStringMap, "tags": shapeStringMap, "Tags": shapeStringMap,
	"MessageAttributes": shapeAttributeMap, "MessageSystemAttributes": shapeAttributeMap,
	"Entries": shapeEntries,
}

// attributeValueShapes are the members of a MessageAttributeValue.
var attributeValueShapes = map[string]shape{
	"DataType": shapeString, "StringValue": shapeString, "BinaryValue": shapeBlob,
	"StringListValues": shapeStringList, "BinaryListValues": shapeBlobList,
}

// checkMembers checks the members of a request (top) or batch entry
// against their shapes, allocating nothing.
func checkMembers(v gjson.Result, top bool) *awserr.Error {
	if err := checkStructure(v); err != nil {
		return err
	}
	var err *awserr.Error
	v.ForEach(func(k, val gjson.Result) bool {
		if sh, ok := memberShape(k.Str, top); ok {
			err = checkShape(val, sh)
		}
		return err == nil
	})
	return err
}

// memberShape is the shape of a known member; batch entries hold no entries.
func memberShape(name string, top bool) (shape, bool) {
	sh, ok := shapes[name]
	return sh, ok && (top || sh != shapeEntries)
}

// checkStructure reports a value that is not a JSON object (or null).
func checkStructure(v gjson.Result) *awserr.Error {
	switch {
	case v.IsObject(), v.Type == gjson.Null:
		return nil
	case v.IsArray():
		return sqs.ErrSerialization.New("Start of list found where not expected")
	}
	return sqs.ErrSerialization.New("Expected null")
}

// checkShape reports a value that does not have shape sh. Lists and maps
// are checked element by element; null elements are skipped by the readers.
func checkShape(v gjson.Result, sh shape) *awserr.Error {
	if v.Type == gjson.Null {
		return nil
	}
	switch sh {
	case shapeString, shapeBlob:
		return scalar(v, gjson.String, "a String")
	case shapeInteger:
		if err := scalar(v, gjson.Number, "an Integer"); err != nil {
			return err
		}
		if v.Num != math.Trunc(v.Num) || v.Num < math.MinInt32 || v.Num > math.MaxInt32 {
			return sqs.ErrSerialization.New("NUMBER_VALUE can not be converted to an Integer")
		}
		return nil
	case shapeStringList, shapeBlobList, shapeEntries:
		if err := checkListShape(v); err != nil {
			return err
		}
		var err *awserr.Error
		v.ForEach(func(_, e gjson.Result) bool {
			if sh == shapeEntries {
				err = checkMembers(e, false)
			} else {
				err = checkShape(e, shapeString)
			}
			return err == nil
		})
		return err
	case shapeStringMap, shapeAttributeMap:
		if !v.IsObject() {
			if v.IsArray() {
				return sqs.ErrSerialization.New("Start of list found where not expected")
			}
			return sqs.ErrSerialization.New("Expected map or null")
		}
		var err *awserr.Error
		v.ForEach(func(_, e gjson.Result) bool {
			if sh == shapeStringMap {
				err = checkShape(e, shapeString)
			} else {
				err = checkShape(e, shapeAttributeValue)
			}
			return err == nil
		})
		return err
	case shapeAttributeValue:
		if err := checkStructure(v); err != nil {
			return err
		}
		var err *awserr.Error
		v.ForEach(func(k, e gjson.Result) bool {
			if msh, ok := attributeValueShapes[k.Str]; ok {
				err = checkShape(e, msh)
			}
			return err == nil
		})
		return err
	}
	return nil
}

// checkListShape reports a non-null value that is not a JSON array.
func checkListShape(v gjson.Result) *awserr.Error {
	if !v.IsArray() {
		if v.IsObject() {
			return sqs.ErrSerialization.New("Start of structure or map found where not expected.")
		}
		return sqs.ErrSerialization.New("Expected list or null")
	}
	return nil
}

// scalar reports a value that is not of JSON type want, in the words AWS
// uses: "NUMBER_VALUE can not be converted to a String", "Start of list
// found where not expected", ...
func scalar(v gjson.Result, want gjson.Type, wantName string) *awserr.Error {
	if v.Type == want {
		return nil
	}
	switch {
	case v.IsArray():
		return sqs.ErrSerialization.New("Start of list found where not expected")
	case v.IsObject():
		return sqs.ErrSerialization.New("Start of structure or map found where not expected.")
	}
	token := map[gjson.Type]string{gjson.String: "STRING_VALUE", gjson.Number: "NUMBER_VALUE", gjson.True: "TRUE_VALUE", gjson.False: "FALSE_VALUE"}[v.Type]
	return sqs.ErrSerialization.New("%s can not be converted to %s", token, wantName)
}

func (j *jsonInput) get(name string) gjson.Result {
	for i := range j.members {
		if j.members[i].key == name {
			return j.members[i].val
		}
	}
	return gjson.Result{}
}

// The readers below run on checked members: a member has its shape or is absent.

func (j *jsonInput) str(name string) string { return j.get(name).Str }

func (j *jsonInput) plain(name string) bool {
	for i := range j.members {
		if j.members[i].key == name {
			return j.members[i].plain
		}
	}
	return false
}

func (j *jsonInput) has(name string) bool { return j.get(name).Exists() }

func (j *jsonInput) integer(name string) (*int, error) {
	r := j.get(name)
	if !r.Exists() {
		return nil, nil
	}
	n := int(r.Num)
	return &n, nil
}

func (j *jsonInput) list(jsonName, _ string) []string {
	var out []string
	j.get(jsonName).ForEach(func(_, v gjson.Result) bool {
		if v.Type != gjson.Null {
			out = append(out, v.Str)
		}
		return true
	})
	return out
}

func (j *jsonInput) size(jsonName, _ string) int {
	if d := j.d; jsonName == "Entries" && d != nil && !d.moreEntries {
		return len(d.entries)
	}
	n := 0
	j.get(jsonName).ForEach(func(_, v gjson.Result) bool {
		if v.Type != gjson.Null {
			n++
		}
		return true
	})
	return n
}

func (j *jsonInput) strMap(jsonName, _, _, _ string) map[string]string {
	r := j.get(jsonName)
	if !r.Exists() {
		return nil
	}
	out := map[string]string{}
	r.ForEach(func(k, v gjson.Result) bool {
		if v.Type != gjson.Null {
			out[k.Str] = v.Str
		}
		return true
	})
	return out
}

func (j *jsonInput) msgAttrs(jsonName, _ string) ([]sqs.MessageAttribute, error) {
	var out []sqs.MessageAttribute
	var err error
	j.get(jsonName).ForEach(func(k, v gjson.Result) bool {
		if v.Type == gjson.Null {
			return true
		}
		if len(out) > sqs.MaxMessageAttributes {
			return false // enough for the engine to refuse
		}
		a := sqs.MessageAttribute{Name: k.Str, DataType: v.Get("DataType").Str, StringValue: v.Get("StringValue").Str}
		if b := v.Get("BinaryValue"); b.Type == gjson.String {
			a.BinaryValue, err = base64.StdEncoding.DecodeString(b.Str)
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

// entries returns the batch entries; callers check their number with size
// first. Only a request's own input has entries.
func (j *jsonInput) entries(jsonName, _ string) []input {
	d := j.d
	if d == nil || jsonName != "Entries" {
		return nil
	}
	if d.moreEntries {
		d.entries, d.moreEntries = d.entries[:0], false
		d.entriesRaw.ForEach(func(_, v gjson.Result) bool {
			if v.Type != gjson.Null {
				in, _ := d.indexEntry(v) // checked with the request
				d.entries = append(d.entries, in)
			}
			return true
		})
	}
	d.inputs = d.inputs[:0]
	for i := range d.entries {
		d.inputs = append(d.inputs, &d.entries[i])
	}
	return d.inputs
}

// queryInput reads a Query-protocol form: flattened lists and maps.
type queryInput struct{ f awswire.Form }

func (q queryInput) str(name string) string { return q.f.Get(name) }
func (q queryInput) has(name string) bool   { return q.f.Has(name) }
func (q queryInput) plain(string) bool      { return false }

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

func (q queryInput) size(_, queryName string) int { return len(q.f.Indexes(queryName)) }

func (q queryInput) msgAttrs(_, queryName string) ([]sqs.MessageAttribute, error) {
	var out []sqs.MessageAttribute
	for _, e := range q.f.Entries(queryName) {
		if len(out) > sqs.MaxMessageAttributes {
			break // enough for the engine to refuse
		}
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
