//go:build !linux

package oplog

import "os"

// Elsewhere a segment syncs with os.File.Sync (F_FULLFSYNC on macOS).
func openDataFile(path string) (SegmentFile, error) {
	return os.OpenFile(path, os.O_WRONLY, 0)
}
