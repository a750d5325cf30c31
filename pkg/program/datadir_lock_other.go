//go:build !unix

package program

import "os"

// lockDataDir takes no lock where flock is not available: two standalones
// on one DATA_DIR are not told apart there.
func lockDataDir(string, bool) (*os.File, error) { return nil, nil }
