package topology_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fanout/fanout"
	"github.com/fanout/fanout/topology"
)

// normal is a topology as plain JSON values, so that int and int64, or a
// map and a struct, compare equal.
func normal(t *testing.T, top *topology.Topology) any {
	t.Helper()
	b, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestExportRoundTrip applies a file that uses every key, exports it, loads
// the export (YAML and JSON) on a second server, and exports again: the
// file, both exports and what each load reads are the same topology.
func TestExportRoundTrip(t *testing.T) {
	t.Parallel()
	file, err := topology.ReadFile("testdata/every-field.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a := start(t, fanout.Options{Topology: file})
	exported, err := topology.Export(engines(a))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := normal(t, exported), normal(t, file); !reflect.DeepEqual(got, want) {
		g, _ := json.MarshalIndent(got, "", " ")
		w, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("export differs from the file:\n%s\nwant:\n%s", g, w)
	}
	y, err := exported.YAML()
	if err != nil {
		t.Fatal(err)
	}
	j, err := exported.JSON()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"export.yaml": y, "export.json": j} {
		back, err := topology.Parse(data, name)
		if err != nil {
			t.Fatalf("%s does not parse: %v\n%s", name, err, data)
		}
		b := start(t, fanout.Options{Topology: back})
		again, err := topology.Export(engines(b))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := normal(t, again), normal(t, file); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: a load of the export exports differently:\n%s", name, data)
		}
		r, err := topology.Apply(back, engines(a), topology.ApplyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Changes) != 0 {
			t.Errorf("%s applied to the server it came from changed %v", name, r.Changes)
		}
	}
}
