package mailbox_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/internal/mail/mailbox"
)

func TestRampDailyTarget(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC) // a Monday
	day := 24 * time.Hour
	ramp := mailbox.Ramp{Anchor: start, Base: 2, Max: 40, Increase: 2, Days: 7}
	for _, c := range []struct {
		name string
		r    mailbox.Ramp
		at   time.Time
		want int
	}{
		{"disabled sends nothing", mailbox.Ramp{Base: 2, Max: 40, Increase: 2, Days: 7}, start, 0},
		{"day one is the base", ramp, start.Add(time.Hour), 2},
		{"before the anchor is the base", ramp, start.Add(-day), 2},
		{"one increase per day", ramp, start.Add(3*day + time.Hour), 8},
		{"never above max", ramp, start.Add(100 * day), 40},
		{"five days a week climbs five steps a week", func() mailbox.Ramp { r := ramp; r.Days = 5; return r }(), start.Add(14 * day), 22},
		{"the partial week counts up to the active days", func() mailbox.Ramp { r := ramp; r.Days = 5; return r }(), start.Add(13 * day), 22},
		{"no increase stays at base", func() mailbox.Ramp { r := ramp; r.Increase = 0; return r }(), start.Add(30 * day), 2},
		{"paused stands still", func() mailbox.Ramp { r := ramp; r.PausedAt = start.Add(4 * day); return r }(), start.Add(20 * day), 10},
		{"a pause in the future has not happened yet", func() mailbox.Ramp { r := ramp; r.PausedAt = start.Add(40 * day); return r }(), start.Add(2 * day), 6},
	} {
		require.Equal(t, c.want, c.r.DailyTarget(c.at), c.name)
	}
}
