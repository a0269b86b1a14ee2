package contacts

import (
	"time"

	"github.com/google/uuid"
)

// NewID returns a new contact id and the created_at it stands for. The id is a UUIDv7 and created_at is its
// timestamp, so ordering by id is ordering by creation (the default search order pages through the primary
// key). Every writer of a new contact row must use both.
func NewID() (uuid.UUID, time.Time, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, time.Time{}, err
	}
	sec, nsec := id.Time().UnixTime()
	return id, time.Unix(sec, nsec).UTC().Truncate(time.Millisecond), nil
}
