package fanout_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fanout/fanout/internal/apicheck"
	"go/types"
)

// TestOutsideModule builds and tests a module of its own that requires
// fanout (through a replace directive to this repository) and uses only its
// public API: README.md's snippets verbatim, the files of testdata/outside,
// and a generated file that spells out the type of every exported name, so
// that an internal type in a public signature fails the build. It runs
// offline, from the module cache, with this module's dependency versions.
func TestOutsideModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module (-short)")
	}
	t.Parallel()
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// go.mod: this module's requirements (the same versions), plus fanout.
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	var gomod strings.Builder
	for _, line := range strings.SplitAfter(string(mod), "\n") {
		switch {
		case strings.HasPrefix(line, "module "):
			gomod.WriteString("module example.com/outside\n")
		case strings.HasPrefix(line, "tool ") || strings.HasPrefix(line, "tool("): // tools are this module's own
		default:
			gomod.WriteString(line)
		}
	}
	gomod.WriteString("\nrequire github.com/fanout/fanout v0.0.0-00010101000000-000000000000\n\nreplace github.com/fanout/fanout => " + root + "\n")
	write("go.mod", []byte(gomod.String()))
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", sum)

	snippets := readmeSnippets(t)
	for name, code := range snippets {
		write(name, []byte(code))
	}
	for _, want := range []string{"helper/orders_test.go", "embed/main.go"} {
		if _, ok := snippets[want]; !ok {
			t.Fatalf("README.md has no snippet %s", want)
		}
	}
	files, _ := filepath.Glob("testdata/outside/*/*.go")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		write(strings.TrimPrefix(filepath.ToSlash(f), "testdata/outside/"), b)
	}
	spelled := spelledAPI(t)
	if n := strings.Count(spelled, "\nvar _ ") + strings.Count(spelled, "\nfunc _("); n < 300 {
		t.Fatalf("only %d exported names spelled:\n%s", n, spelled)
	}
	write("spell/spell.go", []byte(spelled))

	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	run("vet", "./...")
	run("test", "-count=1", "./...")
	if out := run("run", "./embed"); out != "1 hello\n" {
		t.Fatalf("the README's embedding program printed %q", out)
	}
}

var snippetRE = regexp.MustCompile("(?s)<!-- snippet: (\\S+) -->\n```go\n(.*?)```\n<!-- /snippet -->")

// readmeSnippets returns README.md's marked Go snippets by file name.
func readmeSnippets(t *testing.T) map[string]string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range snippetRE.FindAllStringSubmatch(string(readme), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// spelledAPI is apicheck.Spell over every public package of this module.
func spelledAPI(t *testing.T) string {
	t.Helper()
	pkgs, err := apicheck.Load(".", "./...")
	if err != nil {
		t.Fatal(err)
	}
	var public []*types.Package
	for _, p := range pkgs {
		if apicheck.Public(p.PkgPath) {
			public = append(public, p.Types)
		}
	}
	return apicheck.Spell("spell", public)
}
