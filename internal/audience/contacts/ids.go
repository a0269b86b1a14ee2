package contacts

import (
	"bufio"
	"crypto/rand"
	"time"

	"github.com/google/uuid"
)

// NewID returns a new contact id and the created_at it stands for. The id is a UUIDv7 and created_at is its
// timestamp, so ordering by id is ordering by creation (the default search order pages through the primary
// key). Every writer of a new contact row must use both (or an IDs, which makes the same ids).
func NewID() (uuid.UUID, time.Time, error) {
	id, err := uuid.NewV7()
	return withTime(id, err)
}

// IDs makes contact ids as NewID does for a writer that needs many at once (an import makes up to 50,000):
// their randomness comes from the system generator through a buffer, one read per 256 ids, instead of one
// read per id. Not safe for concurrent use.
type IDs struct {
	random *bufio.Reader
}

// NewIDs returns a source of contact ids.
func NewIDs() *IDs {
	return &IDs{random: bufio.NewReaderSize(rand.Reader, 4096)}
}

// Next returns a new contact id and its created_at, as NewID.
func (g *IDs) Next() (uuid.UUID, time.Time, error) {
	id, err := uuid.NewV7FromReader(g.random)
	return withTime(id, err)
}

func withTime(id uuid.UUID, err error) (uuid.UUID, time.Time, error) {
	if err != nil {
		return uuid.Nil, time.Time{}, err
	}
	sec, nsec := id.Time().UnixTime()
	return id, time.Unix(sec, nsec).UTC().Truncate(time.Millisecond), nil
}
