//go:build !linux

package oplog

import (
	"errors"
	"os"
)

// Elsewhere a segment syncs with os.File.Sync (F_FULLFSYNC on macOS).
func openDataFile(path string) (SegmentFile, error) {
	return os.OpenFile(path, os.O_WRONLY, 0)
}

// reserveBlocks is not done here: files are appended to as they grow.
func reserveBlocks(*os.File, int64, int64) error { return errors.ErrUnsupported }
