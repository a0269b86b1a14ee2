package pagination_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/apierror"
	"github.com/outflowhq/outflow/internal/platform/pagination"
)

type position struct {
	CreatedAt time.Time `json:"t"`
	ID        uuid.UUID `json:"id"`
}

func requireInvalidCursor(t *testing.T, err error) {
	t.Helper()
	var e *apierror.Error
	require.True(t, errors.As(err, &e), "got %v", err)
	require.Equal(t, 400, e.Status)
	require.Equal(t, "invalid_cursor", e.Code)
}

func TestCursorRoundTrip(t *testing.T) {
	t.Parallel()
	c := pagination.NewCursors([]byte(strings.Repeat("k", 32)))
	want := position{CreatedAt: time.Date(2026, 11, 23, 10, 0, 0, 123456000, time.UTC), ID: uuid.New()}
	cur, err := c.Encode("created_at:desc", want)
	require.NoError(t, err)

	var got position
	require.NoError(t, c.Decode(cur, "created_at:desc", &got))
	require.True(t, want.CreatedAt.Equal(got.CreatedAt))
	require.Equal(t, want.ID, got.ID)
}

func TestCursorRefusesTamperingOtherSortAndOtherKey(t *testing.T) {
	t.Parallel()
	c := pagination.NewCursors([]byte(strings.Repeat("k", 32)))
	cur, err := c.Encode("created_at:desc", position{ID: uuid.New()})
	require.NoError(t, err)
	var p position

	requireInvalidCursor(t, c.Decode(cur, "created_at:asc", &p))

	body, sig, _ := strings.Cut(cur, ".")
	flipped := []byte(body)
	flipped[3] ^= 1
	requireInvalidCursor(t, c.Decode(string(flipped)+"."+sig, "created_at:desc", &p))
	requireInvalidCursor(t, c.Decode(body, "created_at:desc", &p))
	requireInvalidCursor(t, c.Decode("not a cursor", "created_at:desc", &p))
	requireInvalidCursor(t, c.Decode(strings.Repeat("a", 5000), "created_at:desc", &p))

	other := pagination.NewCursors([]byte(strings.Repeat("x", 32)))
	requireInvalidCursor(t, other.Decode(cur, "created_at:desc", &p))
}

func TestLimit(t *testing.T) {
	t.Parallel()
	n, err := pagination.Limit(0, false, 50, 100, false)
	require.NoError(t, err)
	require.Equal(t, 50, n)
	n, err = pagination.Limit(500, true, 50, 100, false)
	require.NoError(t, err)
	require.Equal(t, 50, n, "lenient lists fall back to the default")
	n, err = pagination.Limit(7, true, 50, 100, true)
	require.NoError(t, err)
	require.Equal(t, 7, n)
	_, err = pagination.Limit(201, true, 50, 200, true)
	var e *apierror.Error
	require.True(t, errors.As(err, &e))
	require.Equal(t, "invalid_limit", e.Code)
}

func TestBuild(t *testing.T) {
	t.Parallel()
	c := pagination.NewCursors([]byte(strings.Repeat("k", 32)))
	rows := []int{1, 2, 3, 4}
	page, err := pagination.Build(c, "n:asc", rows, 3, func(n int) any { return n })
	require.NoError(t, err)
	require.Equal(t, []int{1, 2, 3}, page.Data)
	require.True(t, page.HasMore)
	require.NotNil(t, page.NextCursor)
	var last int
	require.NoError(t, c.Decode(*page.NextCursor, "n:asc", &last))
	require.Equal(t, 3, last)

	page, err = pagination.Build(c, "n:asc", rows[:2], 3, func(n int) any { return n })
	require.NoError(t, err)
	require.False(t, page.HasMore)
	require.Nil(t, page.NextCursor)
}
