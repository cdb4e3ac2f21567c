// Package apicheck finds internal types in the exported API of a module's
// public packages: a type another module cannot name or import makes the API
// that mentions it unusable from there (Go refuses "use of internal package").
package apicheck

import (
	"fmt"
	"go/types"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Problem is one exported name that mentions an internal type.
type Problem struct {
	Package, Name, Internal string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s.%s mentions %s", p.Package, p.Name, p.Internal)
}

// Public reports whether a package path is importable from other modules.
func Public(path string) bool {
	for _, seg := range strings.Split(path, "/") {
		if seg == "internal" {
			return false
		}
	}
	return true
}

// Load type-checks the packages patterns name (from dir) and returns the
// non-main ones.
func Load(dir string, patterns ...string) ([]*packages.Package, error) {
	cfg := &packages.Config{Dir: dir, Mode: packages.NeedName | packages.NeedTypes | packages.NeedDeps | packages.NeedImports}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, err
	}
	var out []*packages.Package
	for _, p := range pkgs {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("%s: %v", p.PkgPath, p.Errors[0])
		}
		if p.Name != "main" {
			out = append(out, p)
		}
	}
	return out, nil
}

// Check returns every exported name of pkg that mentions an internal type:
// in a signature, a field, a method (promoted ones too), a variable's or a
// constant's type, or as an alias.
func Check(pkg *types.Package) []Problem {
	c := checker{pkg: pkg}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		c.name = name
		c.seen = map[types.Type]bool{} // only to stop cycles, per name
		switch o := obj.(type) {
		case *types.TypeName:
			if o.IsAlias() {
				c.typ(types.Unalias(o.Type()))
				continue
			}
			c.typ(o.Type().Underlying())
			if n, ok := o.Type().(*types.Named); ok {
				c.typeParams(n.TypeParams())
				ms := types.NewMethodSet(types.NewPointer(n))
				for i := range ms.Len() {
					if m := ms.At(i).Obj(); m.Exported() {
						c.name = name + "." + m.Name()
						c.typ(m.Type())
					}
				}
			}
		default:
			c.typ(obj.Type())
		}
	}
	sort.Slice(c.out, func(i, j int) bool { return c.out[i].String() < c.out[j].String() })
	return c.out
}

type checker struct {
	pkg  *types.Package
	name string
	seen map[types.Type]bool
	out  []Problem
}

func (c *checker) report(obj types.Object) {
	p := Problem{c.pkg.Path(), c.name, obj.Pkg().Path() + "." + obj.Name()}
	if !slices.Contains(c.out, p) {
		c.out = append(c.out, p)
	}
}

func (c *checker) typeParams(tps *types.TypeParamList) {
	for i := range tps.Len() {
		c.typ(tps.At(i).Constraint())
	}
}

// typ walks what a user of t can reach. Named types of public packages are
// not entered: each public package is checked on its own.
func (c *checker) typ(t types.Type) {
	switch t := t.(type) {
	case *types.Alias:
		if o := t.Obj(); o.Pkg() != nil && o.Pkg() != c.pkg && !Public(o.Pkg().Path()) {
			c.report(o)
			return
		}
		c.typ(types.Unalias(t))
	case *types.Named:
		o := t.Obj()
		if o.Pkg() != nil && o.Pkg() != c.pkg && !Public(o.Pkg().Path()) {
			c.report(o)
		}
		if args := t.TypeArgs(); args != nil {
			for i := range args.Len() {
				c.typ(args.At(i))
			}
		}
		// An unexported type of this package reached through an exported
		// name (a returned *queueState, an embedded struct) shows its
		// exported fields and methods: walk them.
		if o.Pkg() == c.pkg && !o.Exported() && !c.seen[t] {
			c.seen[t] = true
			c.typ(t.Underlying())
			ms := types.NewMethodSet(types.NewPointer(t))
			for i := range ms.Len() {
				if m := ms.At(i).Obj(); m.Exported() {
					c.typ(m.Type())
				}
			}
		}
	case *types.Pointer:
		c.typ(t.Elem())
	case *types.Slice:
		c.typ(t.Elem())
	case *types.Array:
		c.typ(t.Elem())
	case *types.Chan:
		c.typ(t.Elem())
	case *types.Map:
		c.typ(t.Key())
		c.typ(t.Elem())
	case *types.Signature:
		c.typeParams(t.TypeParams())
		for _, tu := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tu.Len() {
				c.typ(tu.At(i).Type())
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() || f.Embedded() {
				c.typ(f.Type())
			}
		}
	case *types.Interface:
		for i := range t.NumEmbeddeds() {
			c.typ(t.EmbeddedType(i))
		}
		for i := range t.NumExplicitMethods() {
			if m := t.ExplicitMethod(i); m.Exported() {
				c.typ(m.Type())
			}
		}
	case *types.Union:
		for i := range t.Len() {
			c.typ(t.Term(i).Type())
		}
	}
}
