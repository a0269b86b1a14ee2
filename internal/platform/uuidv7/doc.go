// Package uuidv7 reads and bounds the creation time UUIDv7 ids carry in their first 48 bits (Unix
// milliseconds), so a time range over a table keyed by such ids (contacts, events) is a primary key range
// instead of a scan. Areas that page or count by creation time (contacts, realtime, analytics) share it here
// rather than each keep a copy.
//
// Invariants:
//   - Floor(t) is a valid version 7 id no greater than any UUIDv7 generated at or after t (to the
//     millisecond) and greater than every one generated before t's millisecond; times before 1970 floor to
//     the epoch.
//   - Time(Floor(t)) is t truncated to the millisecond (for t at or after the epoch).
package uuidv7
