// Package secret is an internal package whose types must not leak.
package secret

type T struct{ N int }

type I interface{ M() }

func (T) M() {}
