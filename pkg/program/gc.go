package program

import (
	"os"
	"runtime/debug"
)

// tuneGC sets the collector's target to 400 % unless the operator set
// GOGC: at the default 100 % the pipeline spends a fifth of its CPU
// collecting a heap of a few tens of megabytes (docs/scaling.md).
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
}
