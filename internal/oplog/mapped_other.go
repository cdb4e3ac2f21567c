//go:build !linux

package oplog

// dontNeed keeps b's pages mapped until the mapping is closed: recovery
// then holds the files it maps in its resident memory meanwhile.
func dontNeed([]byte) {}
