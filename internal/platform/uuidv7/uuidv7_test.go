package uuidv7_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/uuidv7"
)

func TestFloorBoundsTheIdsOfItsMillisecondAndTimeReadsThemBack(t *testing.T) {
	t.Parallel()
	id, err := uuid.NewV7()
	require.NoError(t, err)
	now := time.Now()
	require.WithinDuration(t, now, uuidv7.Time(id), time.Second)
	floor := uuidv7.Floor(now.Add(-time.Second))
	require.Equal(t, 7, int(floor.Version()))
	require.Equal(t, uuid.RFC4122, floor.Variant())
	require.Negative(t, strings.Compare(floor.String(), id.String()), "an id made after the floor's time is above it")
	require.Positive(t, strings.Compare(uuidv7.Floor(now.Add(time.Second)).String(), id.String()), "and below a later floor")
	ms := time.UnixMilli(1_780_000_000_123)
	require.True(t, ms.Equal(uuidv7.Time(uuidv7.Floor(ms.Add(456*time.Microsecond)))), "the floor keeps the millisecond")
	require.True(t, time.UnixMilli(0).Equal(uuidv7.Time(uuidv7.Floor(time.Date(1960, 1, 1, 0, 0, 0, 0, time.UTC)))),
		"a time before 1970 floors to the epoch")
}
