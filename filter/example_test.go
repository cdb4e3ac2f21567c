package filter_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fanout/fanout/filter"
)

func ExampleCompile() {
	p, err := filter.Compile(`{"store":["example_corp"],"price_usd":[{"numeric":[">=",100]}]}`, filter.ScopeAttributes)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Match(filter.Message{Attributes: map[string]filter.Attribute{
		"store":     {DataType: "String", StringValue: "example_corp"},
		"price_usd": {DataType: "Number", StringValue: "120.5"},
	}}))
	fmt.Println(p.Match(filter.Message{Attributes: map[string]filter.Attribute{
		"store": {DataType: "String", StringValue: "example_corp"},
	}}))
	// Output:
	// true
	// false
}

func ExampleCompile_body() {
	p, _ := filter.Compile(`{"detail":{"state":[{"anything-but":"ok"}]}}`, filter.ScopeBody)
	fmt.Println(p.Match(filter.Message{Body: `{"detail":{"state":"alarm"}}`}))
	fmt.Println(p.Match(filter.Message{Body: `{"detail":{"state":"ok"}}`}))
	// Output:
	// true
	// false
}

func ExampleError() {
	_, err := filter.Compile(`{"key":[]}`, filter.ScopeAttributes)
	var fe *filter.Error
	if errors.As(err, &fe) {
		fmt.Println(fe.Message())
		fmt.Println(fe.Error())
		fmt.Println(fe.SubscribeMessage())
	}
	// Output:
	// Empty arrays are not allowed
	// Invalid parameter: FilterPolicy: Empty arrays are not allowed
	// Invalid parameter: Attributes Reason: FilterPolicy: Empty arrays are not allowed
}

func ExamplePolicy_Explain() {
	p, _ := filter.Compile(`{"sport":["rugby",{"prefix":"foot"}]}`, filter.ScopeAttributes)
	ex := p.Explain(filter.Message{Attributes: map[string]filter.Attribute{
		"sport": {DataType: "String", StringValue: "football"},
	}})
	out, _ := json.Marshal(ex)
	fmt.Println(string(out))
	// Output:
	// {"matched":true,"scope":"MessageAttributes","branches":[{"matched":true,"keys":[{"key":"sport","matched":true,"present":true,"conditions":["\"rugby\"","{\"prefix\":\"foot\"}"],"values":["\"football\""],"matchedValue":"\"football\"","condition":"{\"prefix\":\"foot\"}"}]}]}
}
