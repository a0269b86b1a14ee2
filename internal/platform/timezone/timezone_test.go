package timezone_test

import (
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/platform/timezone"
)

func TestOptionsListEveryRegionZoneOnceUTCFirstThenByName(t *testing.T) {
	t.Parallel()
	zones, err := timezone.Load()
	require.NoError(t, err)
	opts := zones.Options(time.Now())
	require.Len(t, opts, 419)
	require.Equal(t, timezone.Option{Name: "UTC", DisplayName: "UTC"}, opts[0])
	names := make([]string, 0, len(opts))
	shown := regexp.MustCompile(`^\(UTC[+-]\d\d:\d\d\) [A-Za-z]+(/[A-Za-z' .-]+)+$`)
	for _, o := range opts[1:] {
		_, err := time.LoadLocation(o.Name)
		require.NoError(t, err, o.Name)
		require.Regexp(t, shown, o.DisplayName, o.Name)
		names = append(names, o.Name)
	}
	require.True(t, slices.IsSorted(names))
	require.Len(t, slices.Compact(names), len(opts)-1, "no zone listed twice")
	for _, want := range []string{"America/New_York", "Europe/Amsterdam", "Asia/Kolkata", "Australia/Lord_Howe", "America/Argentina/Buenos_Aires"} {
		require.Contains(t, names, want)
	}
}

func TestOptionsShowTheOffsetInForceAtTheTimeAsked(t *testing.T) {
	t.Parallel()
	zones, err := timezone.Load()
	require.NoError(t, err)
	find := func(at time.Time, name string) string {
		for _, o := range zones.Options(at) {
			if o.Name == name {
				return o.DisplayName
			}
		}
		t.Fatalf("%s not offered", name)
		return ""
	}
	winter := time.Date(2026, time.January, 15, 12, 0, 0, 0, time.UTC)
	summer := time.Date(2026, time.July, 15, 12, 0, 0, 0, time.UTC)
	require.Equal(t, "(UTC-05:00) America/New York", find(winter, "America/New_York"))
	require.Equal(t, "(UTC-04:00) America/New York", find(summer, "America/New_York"))
	require.Equal(t, "(UTC+05:30) Asia/Kolkata", find(summer, "Asia/Kolkata"))
	require.Equal(t, "(UTC+13:00) Pacific/Auckland", find(winter, "Pacific/Auckland"))
	require.Equal(t, "(UTC-03:00) America/Argentina/Buenos Aires", find(winter, "America/Argentina/Buenos_Aires"))
	require.Equal(t, "(UTC+05:45) Asia/Kathmandu", find(winter, "Asia/Kathmandu"))
}

func BenchmarkOptions(b *testing.B) {
	zones, err := timezone.Load()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		zones.Options(time.Now())
	}
}
