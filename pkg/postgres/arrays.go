package postgres

import (
	"encoding/binary"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// pgx encodes a Go slice sent as an array element by element: each one
// boxed in an interface, wrapped, and dispatched through its plan — 7 % of
// the pipeline's CPU in the bench profile, the ledger's batches being
// columns of arrays (unnest). The slices our statements send are written
// here directly in PostgreSQL's binary array format, byte for byte what
// pgx writes (TestFastArraysEncodeAsPgxDoes); everything else, and every
// decode, stays with pgx's codec.

// registerFastArrays puts fastArrayCodec in front of pgx's codec for the
// array types our statements send.
func registerFastArrays(m *pgtype.Map) {
	for _, oid := range []uint32{pgtype.UUIDArrayOID, pgtype.TimestamptzArrayOID, pgtype.TextArrayOID,
		pgtype.Int8ArrayOID, pgtype.Int4ArrayOID, pgtype.JSONArrayOID, pgtype.JSONBArrayOID, pgtype.ByteaArrayOID} {
		t, ok := m.TypeForOID(oid)
		if !ok {
			continue
		}
		m.RegisterType(&pgtype.Type{Name: t.Name, OID: t.OID, Codec: fastArrayCodec{Codec: t.Codec, oid: oid}})
	}
}

type fastArrayCodec struct {
	pgtype.Codec
	oid uint32
}

func (c fastArrayCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if format == pgtype.BinaryFormatCode {
		switch {
		case c.oid == pgtype.UUIDArrayOID && isType[[]uuid.UUID](value):
			return uuidArrayPlan{}
		case c.oid == pgtype.TimestamptzArrayOID && isType[[]time.Time](value):
			return timestamptzArrayPlan{}
		case c.oid == pgtype.TextArrayOID && isType[[]string](value):
			return textArrayPlan{}
		case c.oid == pgtype.Int8ArrayOID && isType[[]int64](value):
			return int8ArrayPlan{}
		case c.oid == pgtype.Int4ArrayOID && isType[[]int32](value):
			return int4ArrayPlan{}
		case c.oid == pgtype.JSONArrayOID && isType[[]string](value):
			return jsonArrayPlan{}
		case c.oid == pgtype.JSONBArrayOID && isType[[]string](value):
			return jsonbArrayPlan{}
		case c.oid == pgtype.ByteaArrayOID && isType[[][]byte](value):
			return byteaArrayPlan{}
		}
	}
	return c.Codec.PlanEncode(m, oid, format, value)
}

func isType[T any](v any) bool {
	_, ok := v.(T)
	return ok
}

// appendArrayHeader writes a one-dimensional array's header: dimensions,
// whether an element is NULL, the element type, the length and lower
// bound 1.
func appendArrayHeader(buf []byte, elemOID uint32, n int, hasNull bool) []byte {
	buf = binary.BigEndian.AppendUint32(buf, 1)
	if hasNull {
		buf = binary.BigEndian.AppendUint32(buf, 1)
	} else {
		buf = binary.BigEndian.AppendUint32(buf, 0)
	}
	buf = binary.BigEndian.AppendUint32(buf, elemOID)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	return binary.BigEndian.AppendUint32(buf, 1)
}

type uuidArrayPlan struct{}

func (uuidArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	s := value.([]uuid.UUID)
	if s == nil {
		return nil, nil // NULL, as pgx sends a nil slice
	}
	buf = appendArrayHeader(buf, pgtype.UUIDOID, len(s), false)
	for i := range s {
		buf = binary.BigEndian.AppendUint32(buf, 16)
		buf = append(buf, s[i][:]...)
	}
	return buf, nil
}

type timestamptzArrayPlan struct{}

// microsFromUnixToY2K: PostgreSQL counts microseconds from 2000-01-01 UTC.
const microsFromUnixToY2K = 946684800 * 1000000

func (timestamptzArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	s := value.([]time.Time)
	if s == nil {
		return nil, nil
	}
	buf = appendArrayHeader(buf, pgtype.TimestamptzOID, len(s), false)
	for i := range s {
		micros := s[i].Unix()*1000000 + int64(s[i].Nanosecond())/1000 - microsFromUnixToY2K
		buf = binary.BigEndian.AppendUint32(buf, 8)
		buf = binary.BigEndian.AppendUint64(buf, uint64(micros))
	}
	return buf, nil
}

type textArrayPlan struct{}

func (textArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	return appendStrings(buf, pgtype.TextOID, value.([]string), nil), nil
}

type jsonArrayPlan struct{}

// Encode sends each string as the JSON text it holds.
func (jsonArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	return appendStrings(buf, pgtype.JSONOID, value.([]string), nil), nil
}

type jsonbArrayPlan struct{}

// jsonbVersion opens jsonb's binary form, the JSON text after it.
var jsonbVersion = []byte{1}

func (jsonbArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	return appendStrings(buf, pgtype.JSONBOID, value.([]string), jsonbVersion), nil
}

// appendStrings writes s as an array of elemOID, each element prefix and
// then the string; nil is NULL.
func appendStrings(buf []byte, elemOID uint32, s []string, prefix []byte) []byte {
	if s == nil {
		return nil
	}
	buf = appendArrayHeader(buf, elemOID, len(s), false)
	for i := range s {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(prefix)+len(s[i])))
		buf = append(buf, prefix...)
		buf = append(buf, s[i]...)
	}
	return buf
}

type byteaArrayPlan struct{}

// Encode sends a nil element as NULL, as pgx does.
func (byteaArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	s := value.([][]byte)
	if s == nil {
		return nil, nil
	}
	hasNull := false
	for i := range s {
		hasNull = hasNull || s[i] == nil
	}
	buf = appendArrayHeader(buf, pgtype.ByteaOID, len(s), hasNull)
	for i := range s {
		if s[i] == nil {
			buf = binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF) // -1: NULL
			continue
		}
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(s[i])))
		buf = append(buf, s[i]...)
	}
	return buf, nil
}

type int4ArrayPlan struct{}

func (int4ArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	return appendInts(buf, pgtype.Int4OID, value.([]int32)), nil
}

type int8ArrayPlan struct{}

func (int8ArrayPlan) Encode(value any, buf []byte) ([]byte, error) {
	return appendInts(buf, pgtype.Int8OID, value.([]int64)), nil
}

// appendInts writes s as an array of elemOID, each element in its size.
func appendInts[T int32 | int64](buf []byte, elemOID uint32, s []T) []byte {
	if s == nil {
		return nil
	}
	buf = appendArrayHeader(buf, elemOID, len(s), false)
	for _, v := range s {
		if elemOID == pgtype.Int4OID {
			buf = binary.BigEndian.AppendUint32(buf, 4)
			buf = binary.BigEndian.AppendUint32(buf, uint32(v))
		} else {
			buf = binary.BigEndian.AppendUint32(buf, 8)
			buf = binary.BigEndian.AppendUint64(buf, uint64(v))
		}
	}
	return buf
}
