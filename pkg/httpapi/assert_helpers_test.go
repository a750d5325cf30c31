package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// at returns the value at a dotted path ("data.wallet.pending",
// "data.0.id") of a decoded JSON document.
func at(doc any, path string) (any, bool) {
	v := doc
	if path == "" {
		return v, true
	}
	for _, part := range strings.Split(path, ".") {
		switch node := v.(type) {
		case map[string]any:
			next, ok := node[part]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			v = node[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// absent wants a path not to exist.
type absent struct{}

// wantStatus fails unless the reply has the status.
func wantStatus(tb testing.TB, r reply, status int) {
	tb.Helper()
	if r.status != status {
		tb.Fatalf("status = %d, want %d; body %s", r.status, status, bytes.TrimSpace(r.raw))
	}
}

// wantFields checks values at paths: an int or int64 wants a JSON integer
// with exactly that value, a string, bool or nil the same JSON value, a
// *regexp.Regexp a matching string, absent{} no such key.
func wantFields(tb testing.TB, r reply, want map[string]any) {
	tb.Helper()
	paths := make([]string, 0, len(want))
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		w := want[p]
		got, ok := at(r.json, p)
		if _, wantAbsent := w.(absent); wantAbsent {
			if ok {
				tb.Errorf("%s = %v, want absent; body %s", p, got, bytes.TrimSpace(r.raw))
			}
			continue
		}
		if !ok {
			tb.Errorf("%s missing, want %v; body %s", p, w, bytes.TrimSpace(r.raw))
			continue
		}
		if msg := mismatch(got, w); msg != "" {
			tb.Errorf("%s: %s; body %s", p, msg, bytes.TrimSpace(r.raw))
		}
	}
}

func mismatch(got, want any) string {
	switch w := want.(type) {
	case int:
		return mismatch(got, int64(w))
	case int64:
		n, ok := got.(json.Number)
		if !ok {
			return fmt.Sprintf("got %#v (%T), want the integer %d", got, got, w)
		}
		if n.String() != strconv.FormatInt(w, 10) {
			return fmt.Sprintf("got %s, want %d", n, w)
		}
	case string:
		if s, ok := got.(string); !ok || s != w {
			return fmt.Sprintf("got %#v, want %q", got, w)
		}
	case bool:
		if b, ok := got.(bool); !ok || b != w {
			return fmt.Sprintf("got %#v, want %v", got, w)
		}
	case nil:
		if got != nil {
			return fmt.Sprintf("got %#v, want null", got)
		}
	case *regexp.Regexp:
		if s, ok := got.(string); !ok || !w.MatchString(s) {
			return fmt.Sprintf("got %#v, want a string matching %s", got, w)
		}
	default:
		panic(fmt.Sprintf("wantFields: unsupported want %T", want))
	}
	return ""
}

// wantKeys checks that the object at path has exactly the keys.
func wantKeys(tb testing.TB, r reply, path string, keys ...string) {
	tb.Helper()
	v, ok := at(r.json, path)
	obj, isObj := v.(map[string]any)
	if !ok || !isObj {
		tb.Errorf("%q is not an object; body %s", path, bytes.TrimSpace(r.raw))
		return
	}
	got := make([]string, 0, len(obj))
	for k := range obj {
		got = append(got, k)
	}
	sort.Strings(got)
	want := append([]string(nil), keys...)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		tb.Errorf("keys of %q = %v, want %v", path, got, want)
	}
}

// wantLen checks the length of the array at path (a JSON array, never null).
func wantLen(tb testing.TB, r reply, path string, n int) {
	tb.Helper()
	v, ok := at(r.json, path)
	arr, isArr := v.([]any)
	if !ok || !isArr {
		tb.Fatalf("%q is not an array; body %s", path, bytes.TrimSpace(r.raw))
	}
	if len(arr) != n {
		tb.Fatalf("len(%s) = %d, want %d; body %s", path, len(arr), n, bytes.TrimSpace(r.raw))
	}
}

// str returns the string at path or fails.
func str(tb testing.TB, r reply, path string) string {
	tb.Helper()
	v, _ := at(r.json, path)
	s, ok := v.(string)
	if !ok {
		tb.Fatalf("%s = %#v, want a string; body %s", path, v, bytes.TrimSpace(r.raw))
	}
	return s
}

// wantError checks the error envelope: the status, exactly
// {"error": {"code", "message"}}, the code, a non-empty message and, when
// given, a message naming mentions.
func wantError(tb testing.TB, r reply, status int, code, mentions string) {
	tb.Helper()
	if r.status != status {
		tb.Errorf("status = %d, want %d; body %s", r.status, status, bytes.TrimSpace(r.raw))
	}
	wantKeys(tb, r, "", "error")
	wantKeys(tb, r, "error", "code", "message")
	wantFields(tb, r, map[string]any{"error.code": code, "error.message": reNonEmpty})
	if mentions != "" {
		if msg, _ := at(r.json, "error.message"); !strings.Contains(fmt.Sprint(msg), mentions) {
			tb.Errorf("error.message = %q, want it to name %q", msg, mentions)
		}
	}
}
