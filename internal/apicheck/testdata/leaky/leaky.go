// Package leaky leaks internal types in every way the checker must catch,
// next to names that are fine.
package leaky

import "github.com/fanout/fanout/internal/apicheck/testdata/leaky/internal/secret"

type Alias = secret.T

type Embeds struct{ secret.T }

type Field struct{ X *secret.T }

func Func(secret.T) {}

type Generic[P interface{ ~int | secret.T }] struct{}

type Iface interface{ Get() secret.I }

type Map map[string][]secret.T

type hidden struct{ Y secret.T }

func (hidden) Exposed() secret.T { return secret.T{} }

type Promoted struct{ hidden }

func Returned() *hidden { return nil }

type S struct{}

func (*S) Method() secret.I { return nil }

var Var = secret.T{}

type wrapper struct{}

func (wrapper) Method() chan secret.T { return nil }

type Wrapped struct{ wrapper }

// Fine: unexported names and fields, and methods of unexported names.
type Fine struct {
	n secret.T
	N int
}

func (Fine) m() secret.T { return secret.T{} }

func fine() secret.T { return secret.T{} }

var _ = fine
