package contactimport

import (
	"encoding/binary"
	"time"

	"github.com/google/uuid"
)

// The staging rows go to Postgres in COPY's binary format, encoded here as they are read: pgx's CopyFrom
// plans and encodes every value through its type map, which took about a fifth of the Go side of a
// 50,000-row import (the part COPY waits for). The format (PostgreSQL docs, "COPY ... Binary Format"): a
// signature and two zero words, then per row a 16-bit field count and per field a 32-bit length (-1 for
// NULL) and the value's binary send form, then -1 as the field count.

// copyHeader opens a binary COPY stream: the signature, no flags, no header extension.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// copyTrailer ends a binary COPY stream.
var copyTrailer = []byte{0xff, 0xff}

// postgresEpoch is where timestamptz's send form counts microseconds from.
var postgresEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// textOID is the element type an array of text declares.
const textOID = 25

func copyRowStart(b []byte, fields int) []byte {
	return binary.BigEndian.AppendUint16(b, uint16(fields))
}

func copyNull(b []byte) []byte { return binary.BigEndian.AppendUint32(b, 0xffffffff) }

func copyText(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func copyUUID(b []byte, id uuid.UUID) []byte {
	b = binary.BigEndian.AppendUint32(b, 16)
	return append(b, id[:]...)
}

func copyTime(b []byte, t time.Time) []byte {
	b = binary.BigEndian.AppendUint32(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(t.Sub(postgresEpoch).Microseconds()))
}

func copyBool(b []byte, v bool) []byte {
	b = binary.BigEndian.AppendUint32(b, 1)
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// copyJSONB writes a jsonb value: the format version (1), then the JSON text.
func copyJSONB(b []byte, json []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(json)+1))
	b = append(b, 1)
	return append(b, json...)
}

// copyTextArray writes a one-dimensional text[] without NULLs: dimensions, a no-NULLs flag, the element
// type, the length and lower bound (1), then each element as a field.
func copyTextArray(b []byte, items []string) []byte {
	size := 20
	for _, s := range items {
		size += 4 + len(s)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(size))
	b = binary.BigEndian.AppendUint32(b, 1)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, textOID)
	b = binary.BigEndian.AppendUint32(b, uint32(len(items)))
	b = binary.BigEndian.AppendUint32(b, 1)
	for _, s := range items {
		b = copyText(b, s)
	}
	return b
}
