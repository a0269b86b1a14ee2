package uuidv7

import (
	"encoding/binary"
	"time"

	"github.com/google/uuid"
)

// Floor is the smallest UUIDv7 of t's millisecond: every id generated at or after t is at least this, every
// earlier one below it.
func Floor(t time.Time) uuid.UUID {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(max(t.UnixMilli(), 0)))
	var id uuid.UUID
	copy(id[:6], b[2:])
	id[6] = 0x70 // version 7
	id[8] = 0x80 // RFC 9562 variant
	return id
}

// Time is the creation time id carries (to the millisecond).
func Time(id uuid.UUID) time.Time {
	var b [8]byte
	copy(b[2:], id[:6])
	return time.UnixMilli(int64(binary.BigEndian.Uint64(b[:])))
}
