package main

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

func TestRenderCountsPassedPerLabel(t *testing.T) {
	t.Parallel()
	res := []result{
		{name: "fanout", version: "1", specs: []spec{
			{labels: []string{"sqs-standard"}, state: types.SpecStatePassed},
			{labels: []string{"sqs-standard", "errors"}, state: types.SpecStatePassed},
		}},
		{name: "other", version: "2", specs: []spec{
			{labels: []string{"sqs-standard"}, state: types.SpecStateFailed},
			{labels: []string{"sqs-standard", "errors"}, state: types.SpecStatePassed},
		}},
		{name: "absent", err: errTest},
	}
	got := render(res)
	want := "| feature | fanout 1 | other 2 | absent  |\n|---|---:|---:|---:|\n" +
		"| `errors` | 1/1 | 1/1 | not measured |\n" +
		"| `sqs-standard` | 2/2 | 1/2 | not measured |\n" +
		"| **all specs** | **2/2** | **1/2** | **not measured** |\n"
	if got != want {
		t.Fatalf("render:\n%s\nwant:\n%s", got, want)
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("no")

func TestReplaceTableAndShape(t *testing.T) {
	t.Parallel()
	doc := "intro\n" + startMarker + "\nold\n" + endMarker + "\nafter\n"
	a, err := replaceTable(doc, "| `x` | 3/3 | 1/3 |\n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a, startMarker+"\n| `x` | 3/3 | 1/3 |\n"+endMarker+"\nafter") {
		t.Fatalf("replaced: %q", a)
	}
	b, _ := replaceTable(doc, "| `x` | 3/3 | 2/3 |\n")
	if shape(a) != shape(b) {
		t.Errorf("another emulator's passed count changes the shape:\n%s\n%s", shape(a), shape(b))
	}
	c, _ := replaceTable(doc, "| `x` | 2/3 | 1/3 |\n")
	if shape(a) == shape(c) {
		t.Error("fanout's passed count does not change the shape")
	}
	d, _ := replaceTable(doc, "| `x` | 3/3 | 1/4 |\n")
	if shape(a) == shape(d) {
		t.Error("a total does not change the shape")
	}
	if _, err := replaceTable("no markers", "t"); err == nil {
		t.Error("no error without markers")
	}
}
