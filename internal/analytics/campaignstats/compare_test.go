package campaignstats_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/analytics/campaignstats"
	"github.com/outflowhq/outflow/internal/platform/apierror"
)

func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	var e *apierror.Error
	require.True(t, errors.As(err, &e), "want %s, got %v", code, err)
	require.Equal(t, code, e.Code)
}

func TestCompareIDsDropsInvalidEntriesAndCountsOnlyValidDistinctIds(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	ids, err := campaignstats.CompareIDs(" " + b.String() + " ,x,," + a.String() + "," + b.String())
	require.NoError(t, err)
	require.Equal(t, []uuid.UUID{b, a}, ids, "in the order given, trimmed, a repeat once")

	_, err = campaignstats.CompareIDs(" , nope")
	requireCode(t, err, "invalid_ids")

	var ten []string
	for range 10 {
		ten = append(ten, uuid.NewString())
	}
	ids, err = campaignstats.CompareIDs(strings.Join(ten, ",") + ",junk,more-junk," + ten[0])
	require.NoError(t, err, "junk and repeats do not count against the limit")
	require.Len(t, ids, 10)
	_, err = campaignstats.CompareIDs(strings.Join(ten, ",") + "," + uuid.NewString())
	requireCode(t, err, "too_many_ids")
}

func TestRangeTakesBothDaysAndAtMost366(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	first, last, err := campaignstats.Range(day("2024-01-01"), day("2024-12-31"))
	require.NoError(t, err, "2024 has 366 days")
	require.Equal(t, day("2024-01-01"), first)
	require.Equal(t, day("2024-12-31"), last)
	_, _, err = campaignstats.Range(day("2024-01-01"), day("2025-01-01"))
	requireCode(t, err, "date_range_too_long")
	_, _, err = campaignstats.Range(day("2024-01-02"), day("2024-01-01"))
	requireCode(t, err, "invalid_date_range")
	_, _, err = campaignstats.Range(day("2024-01-01"), day("2024-01-01"))
	require.NoError(t, err, "one day")
}
