package inbound

import (
	"bytes"
	"errors"
	"io"
	"strings"

	json "github.com/goccy/go-json"
)

// Redacted replaces the value of every sensitive field in a body shown.
const Redacted = "[redacted]"

// sensitiveWords mark a field whose value is a credential: Guru's
// api_token (the merchant's account token), Hotmart's hottok (which its
// older postbacks carried in the body) and anything named like them.
var sensitiveWords = []string{"token", "secret", "password", "hottok"}

// SensitiveField reports whether a JSON field named name holds a
// credential: its name contains token, secret, password or hottok, in any
// case.
func SensitiveField(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range sensitiveWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// Redact returns a delivery's JSON body indented for reading, with the
// value of every sensitive field (SensitiveField), at any depth, replaced
// by Redacted; fields keep their order and numbers their digits. A body
// that is not one JSON value gives ok false and nothing: it cannot be
// shown without risking the credential it may hold.
func Redact(body []byte) (out []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var buf bytes.Buffer
	if err := redactValue(dec, &buf); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false // trailing data
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, buf.Bytes(), "", "  "); err != nil {
		return nil, false
	}
	return indented.Bytes(), true
}

// redactValue copies the next JSON value of dec to out, redacting inside.
func redactValue(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	delim, isDelim := tok.(json.Delim)
	if !isDelim {
		b, err := json.Marshal(tok)
		if err != nil {
			return err
		}
		out.Write(b)
		return nil
	}
	switch delim {
	case '{':
		out.WriteByte('{')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			k, _ := json.Marshal(key)
			out.Write(k)
			out.WriteByte(':')
			if !SensitiveField(key) {
				if err := redactValue(dec, out); err != nil {
					return err
				}
				continue
			}
			var skipped json.RawMessage
			if err := dec.Decode(&skipped); err != nil {
				return err
			}
			r, _ := json.Marshal(Redacted)
			out.Write(r)
		}
		out.WriteByte('}')
	case '[':
		out.WriteByte('[')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := redactValue(dec, out); err != nil {
				return err
			}
		}
		out.WriteByte(']')
	default:
		return errors.New("unexpected " + delim.String())
	}
	_, err = dec.Token() // the closing delimiter
	return err
}
