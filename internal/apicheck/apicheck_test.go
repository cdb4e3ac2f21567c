package apicheck

import (
	"go/types"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestNoInternalTypesInPublicAPI holds the rule every public package of
// fanout keeps: nothing exported mentions an internal type, so everything
// exported can be used from another module.
func TestNoInternalTypesInPublicAPI(t *testing.T) {
	pkgs, err := Load("../..", "./...")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pkgs {
		if !Public(p.PkgPath) {
			continue
		}
		names = append(names, p.PkgPath)
		for _, prob := range Check(p.Types) {
			t.Error(prob)
		}
	}
	for _, want := range []string{"github.com/fanout/fanout", "github.com/fanout/fanout/clock", "github.com/fanout/fanout/sqs"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s was not checked (checked %v)", want, names)
		}
	}
}

// The checker itself finds each way an internal type can leak.
func TestCheckFindsEveryLeak(t *testing.T) {
	pkgs, err := Load(".", "./testdata/leaky")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 {
		t.Fatalf("loaded %d packages", len(pkgs))
	}
	var got []string
	for _, p := range Check(pkgs[0].Types) {
		got = append(got, p.Name)
	}
	want := []string{"Alias", "Embeds", "Field", "Func", "Generic", "Iface", "Map", "Promoted", "Promoted.Exposed", "Returned", "S.Method", "Var", "Wrapped", "Wrapped.Method"}
	if !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
}

// Spell writes each leak with the internal package's import, which another
// module cannot compile, and leaves out what cannot be spelled anywhere.
func TestSpellNamesInternalTypes(t *testing.T) {
	pkgs, err := Load(".", "./testdata/leaky")
	if err != nil {
		t.Fatal(err)
	}
	src := Spell("spell", []*types.Package{pkgs[0].Types})
	secret := regexp.MustCompile(`(p\d+) "github.com/fanout/fanout/internal/apicheck/testdata/leaky/internal/secret"`).FindStringSubmatch(src)
	if secret == nil {
		t.Fatalf("no import of the internal package:\n%s", src)
	}
	for _, want := range []string{
		"var _ func(" + secret[1] + ".T) = p", // Func
		"var _ " + secret[1] + ".T = p",       // Var
		"var _ *" + secret[1] + ".T = (*p",    // Alias
		") " + secret[1] + ".I = (*p",         // S.Method
		"var _ *" + secret[1] + ".T = x.X }",  // Field
	} {
		if !strings.Contains(src, want) {
			t.Errorf("spelled API lacks %q:\n%s", want, src)
		}
	}
	if strings.Contains(src, ".Returned") || strings.Contains(src, ".Generic") {
		t.Errorf("spelled what cannot be spelled outside:\n%s", src)
	}
}
