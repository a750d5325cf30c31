package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"

	"github.com/convida/convida/pkg/postgres"
	"github.com/convida/convida/pkg/testenv"
)

// arraySamples are the slices the batch statements send, with the edges:
// nil (NULL), empty, times before 1970 and with nanoseconds, text that is
// not ASCII, the extremes of bigint.
func arraySamples() []struct {
	oid   uint32
	value any
} {
	sp := time.FixedZone("BRT", -3*3600)
	return []struct {
		oid   uint32
		value any
	}{
		{pgtype.UUIDArrayOID, []uuid.UUID{uuid.New(), uuid.Nil, uuid.New()}},
		{pgtype.UUIDArrayOID, []uuid.UUID{}},
		{pgtype.UUIDArrayOID, []uuid.UUID(nil)},
		{pgtype.TimestamptzArrayOID, []time.Time{
			time.Date(2026, 11, 27, 20, 31, 17, 342831944, time.UTC),
			time.Date(1969, 12, 31, 23, 59, 59, 999999999, sp),
			{},
			time.Date(2000, 1, 1, 0, 0, 0, 1000, time.UTC),
		}},
		{pgtype.TimestamptzArrayOID, []time.Time{}},
		{pgtype.TimestamptzArrayOID, []time.Time(nil)},
		{pgtype.TextArrayOID, []string{"", "pedido-1", "João Ação 💸", "a,b\"c{d}"}},
		{pgtype.TextArrayOID, []string{}},
		{pgtype.TextArrayOID, []string(nil)},
		{pgtype.Int8ArrayOID, []int64{0, -1, 1 << 62, -1 << 63, 1<<63 - 1}},
		{pgtype.Int8ArrayOID, []int64{}},
		{pgtype.Int8ArrayOID, []int64(nil)},
		{pgtype.Int4ArrayOID, []int32{0, -1, 1<<31 - 1, -1 << 31}},
		{pgtype.Int4ArrayOID, []int32(nil)},
		{pgtype.JSONArrayOID, []string{`{"a":1}`, `[]`, `"João"`}},
		{pgtype.JSONArrayOID, []string(nil)},
		{pgtype.JSONBArrayOID, []string{`{"a": 1, "b": [true, null]}`, `{}`, `"💸"`}},
		{pgtype.JSONBArrayOID, []string{}},
		{pgtype.ByteaArrayOID, [][]byte{[]byte("body"), {}, nil, {0, 255}}},
		{pgtype.ByteaArrayOID, [][]byte{[]byte("x")}},
		{pgtype.ByteaArrayOID, [][]byte(nil)},
	}
}

func TestFastArraysEncodeAsPgxDoes(t *testing.T) {
	plain, fast := pgtype.NewMap(), pgtype.NewMap()
	pgxuuid.Register(plain)
	pgxuuid.Register(fast)
	postgres.RegisterFastArrays(fast)
	for _, s := range arraySamples() {
		name := fmt.Sprintf("%T %v", s.value, s.value)
		want := plain.PlanEncode(s.oid, pgtype.BinaryFormatCode, s.value)
		got := fast.PlanEncode(s.oid, pgtype.BinaryFormatCode, s.value)
		if fmt.Sprintf("%T", got) == fmt.Sprintf("%T", want) {
			t.Fatalf("%s: the fast map planned pgx's own encoder %T", name, got)
		}
		prefix := []byte("bind")
		wantBuf, err := want.Encode(s.value, append([]byte(nil), prefix...))
		if err != nil {
			t.Fatalf("%s: pgx: %v", name, err)
		}
		gotBuf, err := got.Encode(s.value, append([]byte(nil), prefix...))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(gotBuf, wantBuf) {
			t.Errorf("%s:\n got %x\nwant %x", name, gotBuf, wantBuf)
		}
	}
	// Another slice type, another array type and the text format are pgx's.
	for _, c := range []struct {
		oid    uint32
		format int16
		value  any
	}{
		{pgtype.Int8ArrayOID, pgtype.BinaryFormatCode, []int32{1, 2}},
		{pgtype.Int4ArrayOID, pgtype.BinaryFormatCode, []int64{1, 2}},
		{pgtype.JSONBArrayOID, pgtype.BinaryFormatCode, [][]byte{[]byte("{}")}},
		{pgtype.Int8ArrayOID, pgtype.TextFormatCode, []int64{1, 2}},
	} {
		got, want := fast.PlanEncode(c.oid, c.format, c.value), plain.PlanEncode(c.oid, c.format, c.value)
		if fmt.Sprintf("%T", got) != fmt.Sprintf("%T", want) {
			t.Errorf("%d, format %d, %T: planned %T, want pgx's %T", c.oid, c.format, c.value, got, want)
		}
	}
}

// TestFastArraysRoundTrip sends each sample through a pool of ours and
// through a plain pgx connection, and compares what PostgreSQL stored.
func TestFastArraysRoundTrip(t *testing.T) {
	pool := testenv.MustPool(t)
	ctx := context.Background()
	plain, err := pgx.ConnectConfig(ctx, pool.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close(ctx)
	types := map[uint32]string{
		pgtype.UUIDArrayOID: "uuid[]", pgtype.TimestamptzArrayOID: "timestamptz[]", pgtype.TextArrayOID: "text[]",
		pgtype.Int8ArrayOID: "bigint[]", pgtype.Int4ArrayOID: "int[]", pgtype.JSONArrayOID: "json[]",
		pgtype.JSONBArrayOID: "jsonb[]", pgtype.ByteaArrayOID: "bytea[]",
	}
	for _, s := range arraySamples() {
		name := fmt.Sprintf("%T %v", s.value, s.value)
		q := fmt.Sprintf("SELECT $1::%[1]s IS NULL, coalesce(cardinality($1::%[1]s), -1), coalesce($1::%[1]s::text, '')", types[s.oid])
		var gotNull, wantNull bool
		var gotLen, wantLen int
		var got, want string
		if err := pool.QueryRow(ctx, q, s.value).Scan(&gotNull, &gotLen, &got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := plain.QueryRow(ctx, q, s.value).Scan(&wantNull, &wantLen, &want); err != nil {
			t.Fatalf("%s: plain pgx: %v", name, err)
		}
		if gotNull != wantNull || gotLen != wantLen || got != want {
			t.Errorf("%s: stored NULL %v, %d elements, %s; pgx stores NULL %v, %d, %s", name, gotNull, gotLen, got, wantNull, wantLen, want)
		}
	}
}

// BenchmarkArrayEncode encodes a ledger batch's columns (256 rows of a
// uuid, a time, a string and a bigint) with pgx's encoders and with ours.
func BenchmarkArrayEncode(b *testing.B) {
	ids, times, texts, amounts := make([]uuid.UUID, 256), make([]time.Time, 256), make([]string, 256), make([]int64, 256)
	for i := range ids {
		ids[i], times[i], texts[i], amounts[i] = uuid.New(), time.Now(), fmt.Sprintf("order-%d", i), int64(i)*500
	}
	columns := []struct {
		oid   uint32
		value any
	}{{pgtype.UUIDArrayOID, ids}, {pgtype.TimestamptzArrayOID, times}, {pgtype.TextArrayOID, texts}, {pgtype.Int8ArrayOID, amounts}}
	for _, fast := range []bool{false, true} {
		m := pgtype.NewMap()
		pgxuuid.Register(m)
		if fast {
			postgres.RegisterFastArrays(m)
		}
		b.Run(map[bool]string{false: "pgx", true: "fast"}[fast], func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				buf = buf[:0]
				for _, c := range columns {
					var err error
					if buf, err = m.PlanEncode(c.oid, pgtype.BinaryFormatCode, c.value).Encode(c.value, buf); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
