package contacts_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/audience/contacts"
)

// TestIDsIncreaseAndCarryTheirCreatedAt checks what the default sort relies on: ids from an IDs source and
// from NewID, interleaved, are UUIDv7s that only grow, and each created_at is its id's timestamp.
func TestIDsIncreaseAndCarryTheirCreatedAt(t *testing.T) {
	g := contacts.NewIDs()
	var prev []byte
	before := time.Now().Truncate(time.Millisecond)
	for i := range 2000 {
		next := g.Next
		if i%10 == 0 {
			next = contacts.NewID
		}
		id, at, err := next()
		require.NoError(t, err)
		require.EqualValues(t, 7, id.Version())
		sec, nsec := id.Time().UnixTime()
		require.Equal(t, time.Unix(sec, nsec).UTC().Truncate(time.Millisecond), at)
		require.False(t, at.Before(before), "created_at is now")
		if prev != nil {
			require.Positive(t, bytes.Compare(id[:], prev), "id %d grows", i)
		}
		prev = id[:]
	}
}
