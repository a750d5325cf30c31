package openapitest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ExercisedDirEnv names a directory where every test binary appends the
// documented responses its Validators saw, one file per process, so that
// one check after the whole suite (TestEveryDocumentedResponseExercised in
// pkg/openapi, run by `make test`) can see what all packages exercised
// together.
const ExercisedDirEnv = "OPENAPI_EXERCISED_DIR"

var exercisedFile = sync.OnceValue(func() *os.File {
	dir := os.Getenv(ExercisedDirEnv)
	if dir == "" {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, "exercised-"+strconv.Itoa(os.Getpid())+".txt"),
		os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintf(os.Stderr, "openapitest: %s: %v\n", ExercisedDirEnv, err)
		return nil
	}
	return f
})

var exercisedWritten sync.Map // Exercise → struct{}: each written once per process

// shareExercise appends e to this process's file when ExercisedDirEnv is set.
func shareExercise(e Exercise) {
	f := exercisedFile()
	if f == nil {
		return
	}
	if _, dup := exercisedWritten.LoadOrStore(e, struct{}{}); dup {
		return
	}
	_, _ = fmt.Fprintf(f, "%s %d\n", e.Operation, e.Status)
}

// ReadExercised returns what the test binaries wrote to dir.
func ReadExercised(dir string) (map[Exercise]bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "exercised-*.txt"))
	if err != nil {
		return nil, err
	}
	out := map[Exercise]bool{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			op, status, ok := strings.Cut(sc.Text(), " ")
			n, err := strconv.Atoi(status)
			if !ok || err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: bad line %q", name, sc.Text())
			}
			out[Exercise{Operation: op, Status: n}] = true
		}
		f.Close()
	}
	return out, nil
}
